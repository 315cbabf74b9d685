import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The dependency rules of src/, read from the source's own import statements:
 * - no import circle anywhere in src/ (type-only imports count: a circle of types is a circle of
 *   concepts);
 * - the billing assessment (src/billing/) is pure: it imports only src/domain/ and itself, never a
 *   port, a service or storage;
 * - ledger lines are written only by src/services/posting.ts (the shipped storage suite in
 *   src/testing/ exercises the port itself and is exempt);
 * - domain rules do not reach into services, and the few that still read records from the ports
 *   are listed below; that list may only shrink.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The files of src/ each file imports (relative imports only; packages are not ours). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(src)) {
    const text = readFileSync(file, 'utf8');
    const targets: string[] = [];
    for (const match of text.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"](\.[^'"]+)['"]/gm)) {
      let target = normalize(join(dirname(file), match[1]!.replace(/\.js$/, '.ts')));
      if (!existsSync(target)) target = join(target.replace(/\.ts$/, ''), 'index.ts');
      targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Strongly connected components of more than one file (Tarjan), as paths relative to the repository. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(relative(root, w));
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const rel = (path: string) => relative(root, path);

/** Domain files that still import a port's record types; move the records beside their rules to shrink it. */
const DOMAIN_PORT_IMPORTS_ALLOWED = new Set([
  'src/domain/ledger/balance-delta.ts',
  'src/domain/subscription/periods.ts',
  'src/domain/subscription/state-machine.ts',
  'src/domain/webhooks/endpoint-url.ts',
  'src/domain/webhooks/payload-shapes.ts',
  'src/domain/webhooks/retry-policy.ts',
  'src/domain/webhooks/webhook-payload.ts',
]);

describe('architecture: the dependency rules of src/', () => {
  const graph = importGraph();

  it('finds the imports it judges (the reader is not blind)', () => {
    const migration = graph.get(join(src, 'services/migration-service.ts')) ?? [];
    expect(migration.map(rel)).toContain('src/billing/assessment.ts');
    expect(graph.size).toBeGreaterThan(100);
  });

  it('has no import circle', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('the circle finder finds a circle when there is one', () => {
    const a = join(src, 'a.ts');
    const b = join(src, 'b.ts');
    expect(
      circles(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
    ).toEqual([['src/a.ts', 'src/b.ts']]);
  });

  it('keeps the billing assessment pure: it imports only the domain', () => {
    const offending = [...graph.entries()]
      .filter(([file]) => rel(file).startsWith('src/billing/'))
      .flatMap(([file, targets]) =>
        targets
          .map(rel)
          .filter((t) => !t.startsWith('src/domain/') && !t.startsWith('src/billing/'))
          .map((t) => `${rel(file)} -> ${t}`),
      );
    expect(offending).toEqual([]);
  });

  it('writes ledger lines in one place: only the posting module appends to the ledger', () => {
    const appending = sourceFiles(src)
      .filter((file) => /\.ledger\.append\(/.test(readFileSync(file, 'utf8')))
      .map(rel)
      .filter((file) => !file.startsWith('src/testing/'));
    expect(appending).toEqual(['src/services/posting.ts']);
  });

  it('keeps domain rules out of services, and port imports to the shrinking allowlist', () => {
    const offending: string[] = [];
    for (const [file, targets] of graph) {
      const from = rel(file);
      if (!from.startsWith('src/domain/')) continue;
      for (const target of targets.map(rel)) {
        if (target.startsWith('src/services/') || target.startsWith('src/wire/'))
          offending.push(`${from} -> ${target}`);
        if (target.startsWith('src/ports/') && !DOMAIN_PORT_IMPORTS_ALLOWED.has(from))
          offending.push(`${from} -> ${target}`);
      }
    }
    expect(offending).toEqual([]);
    // An entry that no longer imports a port must leave the list, so it only ever shrinks.
    const stillImporting = [...DOMAIN_PORT_IMPORTS_ALLOWED].filter((file) =>
      (graph.get(join(root, file)) ?? []).some((t) => rel(t).startsWith('src/ports/')),
    );
    expect(stillImporting.sort()).toEqual([...DOMAIN_PORT_IMPORTS_ALLOWED].sort());
  });
});
