import Database from 'better-sqlite3';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { tempDir } from '../support/sqlite.js';
import { crashSuite } from './crash-suite.js';

const dir = tempDir('billing-crash-');

crashSuite({
  name: 'sqlite',
  async create(label) {
    const file = dir.file(`${label}.db`);
    return {
      location: { dialect: 'sqlite', file },
      async open() {
        const storage = createSqliteStorage({ database: file });
        await storage.migrate();
        return storage;
      },
      async rows(sql) {
        const db = new Database(file, { readonly: true });
        try {
          return db.prepare(sql).all() as Record<string, unknown>[];
        } finally {
          db.close();
        }
      },
      async dispose() {},
    };
  },
  async close() {
    dir.dispose();
  },
});
