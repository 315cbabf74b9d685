import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
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
  splitting: false,
  // import.meta.url in the CommonJS builds (the SQLite adapter loads better-sqlite3 with createRequire).
  shims: true,
  // Adapters and the testing kit import the core by package name so that every entry shares one copy of it.
  external: [
    'billing-engine',
    'billing-engine/testing',
    'billing-engine/adapters/sqlite',
    'billing-engine/adapters/postgres',
    'billing-engine/adapters/memory',
    'better-sqlite3',
    'pg',
    'kysely',
  ],
});
