import { createRequire } from 'node:module';
import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';

/**
 * The adapters' `kysely` imports, in the built package, go through a small module that loads
 * kysely and, when it is not installed, throws the same "install it" error the adapters give for
 * their drivers, instead of Node's bare "Cannot find package 'kysely'". ESM loads it with a
 * top-level `import()` (the application's own kysely instance); CommonJS with `require`.
 */
const KYSELY_MISSING =
  'billing-engine/adapters/sqlite and billing-engine/adapters/postgres need the package kysely, which is not installed: install kysely (npm install kysely).';

function kyselyWithInstallHint(): Plugin {
  const names = Object.keys(createRequire(import.meta.url)('kysely') as object).filter(
    (name) => name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name),
  );
  return {
    name: 'kysely-with-install-hint',
    setup(build) {
      // With code splitting tsup builds CommonJS as ESM and converts it afterwards; its output
      // extension is what tells the two builds apart.
      const esm = build.initialOptions.outExtension?.['.js'] !== '.cjs';
      build.onResolve({ filter: /^kysely$/ }, (args) =>
        // The loader module's own import of kysely stays a plain external import.
        args.namespace === 'kysely-with-install-hint'
          ? { path: 'kysely', external: true }
          : { path: 'kysely', namespace: 'kysely-with-install-hint' },
      );
      build.onLoad({ filter: /.*/, namespace: 'kysely-with-install-hint' }, () => ({
        resolveDir: process.cwd(),
        loader: 'js',
        contents: [
          "import { BillingError } from 'billing-engine';",
          'let kysely;',
          'try {',
          esm ? "  kysely = await import('kysely');" : "  kysely = require('kysely');",
          '} catch (error) {',
          "  const code = error && typeof error === 'object' ? error.code : undefined;",
          "  if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && /'kysely'/.test(String(error.message)))",
          `    throw new BillingError('storage', ${JSON.stringify(KYSELY_MISSING)}, { cause: error });`,
          '  throw error;',
          '}',
          ...names.map((name) => `export const ${name} = kysely.${name};`),
        ].join('\n'),
      }));
    },
  };
}

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'chargify/index': 'src/chargify/index.ts',
    'http/index': 'examples/http/index.ts',
    'gateways/stripe/index': 'gateways/stripe/index.ts',
    'testing/index': 'src/testing/index.ts',
    'adapters/memory/index': 'adapters/memory/index.ts',
    'adapters/sqlite/index': 'adapters/sqlite/index.ts',
    'adapters/postgres/index': 'adapters/postgres/index.ts',
    'bin/billing-engine': 'bin/billing-engine.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // Shared modules become shared chunks, so that every entry that reaches the core by a relative
  // import (the wire format under `chargify`) uses the root's one copy of it: one BillingError class.
  splitting: true,
  // import.meta.url in the CommonJS builds (the SQLite adapter loads better-sqlite3 with createRequire).
  shims: true,
  // Subpaths import the core by package name so that every entry shares one copy of it. Dependencies
  // and peers are external anyway; the optional peers are listed so a dynamic import stays one.
  external: [/^billing-engine(\/.*)?$/, 'better-sqlite3', 'pg', 'stripe', 'pdfkit'],
  // Except the wire format where the HTTP binding reaches it (examples/http/wire-bridge.ts): bundled
  // from source (tsconfig paths), it joins the shared chunks. CommonJS code splitting cannot
  // re-export an external module's names (`export *`) before a shared chunk reads them. The types
  // still import it by name. kysely is left to the plugin below, which keeps it external itself.
  noExternal: [/^billing-engine\/chargify$/, /^kysely$/],
  esbuildPlugins: [kyselyWithInstallHint()],
});
