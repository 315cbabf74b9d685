/**
 * The names each public entry of the package exports, read from its TypeScript source with the
 * compiler (so type-only exports count too), each marked `type` or `value`.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Every public entry: its subpath and its source file. */
export const PUBLIC_ENTRIES: Readonly<Record<string, string>> = {
  'billing-engine': 'src/index.ts',
  'billing-engine/chargify': 'src/chargify/index.ts',
  'billing-engine/http': 'examples/http/index.ts',
  'billing-engine/gateways/stripe': 'gateways/stripe/index.ts',
  'billing-engine/testing': 'src/testing/index.ts',
  'billing-engine/adapters/memory': 'adapters/memory/index.ts',
  'billing-engine/adapters/sqlite': 'adapters/sqlite/index.ts',
  'billing-engine/adapters/postgres': 'adapters/postgres/index.ts',
};

/** One exported name: `value` when it exists at run time, `type` when only the compiler sees it. */
export interface ExportedName {
  readonly name: string;
  readonly kind: 'value' | 'type';
  /** Whether its declaration carries a doc comment. */
  readonly documented: boolean;
}

/** The exports of every public entry, sorted by name. */
export function exportedNames(): Record<string, ExportedName[]> {
  const configFile = ts.readConfigFile(`${root}/tsconfig.json`, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  const files = Object.values(PUBLIC_ENTRIES).map((file) => `${root}/${file}`);
  const program = ts.createProgram(files, { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  const out: Record<string, ExportedName[]> = {};
  for (const [subpath, file] of Object.entries(PUBLIC_ENTRIES)) {
    const source = program.getSourceFile(`${root}/${file}`);
    if (source === undefined) throw new Error(`${file} is not in the program`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    if (moduleSymbol === undefined) throw new Error(`${file} is not a module`);
    out[subpath] = checker
      .getExportsOfModule(moduleSymbol)
      .map((symbol) => {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        const typeOnly = (target.flags & ts.SymbolFlags.Value) === 0 || isTypeOnlyReexport(checker, symbol);
        return {
          name: symbol.name,
          kind: typeOnly ? ('type' as const) : ('value' as const),
          documented: (target.declarations ?? []).some(
            (declaration) => ts.getJSDocCommentsAndTags(declaration).length > 0,
          ),
        };
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  return out;
}

/** Whether an alias reaches its target through an `export type` / `import type` anywhere on the way. */
function isTypeOnlyReexport(checker: ts.TypeChecker, symbol: ts.Symbol): boolean {
  let current: ts.Symbol | undefined = symbol;
  for (let hops = 0; current !== undefined && current.flags & ts.SymbolFlags.Alias && hops < 20; hops++) {
    if ((current.declarations ?? []).some((declaration) => ts.isTypeOnlyImportOrExportDeclaration(declaration)))
      return true;
    current = checker.getImmediateAliasedSymbol(current);
  }
  return false;
}
