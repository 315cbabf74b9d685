/**
 * SQLite test harness: a fresh, migrated in-memory database per test (fast), and temp-dir files
 * for the cases that need a real file (WAL, several connections, several processes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Storage } from 'billing-engine';
import { createSqliteStorage, type SqliteStorageOptions } from 'billing-engine/adapters/sqlite';
import type { StorageHarness } from 'billing-engine/testing';

/** A fresh in-memory SQLite storage per test. */
export const sqliteHarness: StorageHarness = {
  name: 'sqlite',
  capabilities: { dialect: 'sqlite', concurrentTransactions: false, multiProcess: false },
  async create() {
    const storage = createSqliteStorage({ database: ':memory:' });
    await storage.migrate();
    return storage;
  },
};

/** A temp directory for database files, removed by `dispose`. */
export interface TempDir {
  readonly path: string;
  file(name: string): string;
  dispose(): void;
}

/** Creates a temp directory under the OS temp dir. */
export function tempDir(prefix = 'billing-sqlite-'): TempDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return {
    path,
    file: (name) => join(path, name),
    dispose: () => rmSync(path, { recursive: true, force: true }),
  };
}

/** A migrated storage on a database file. */
export async function fileStorage(
  file: string,
  options: Omit<SqliteStorageOptions, 'database'> = {},
): Promise<Storage> {
  const storage = createSqliteStorage({ ...options, database: file });
  await storage.migrate();
  return storage;
}
