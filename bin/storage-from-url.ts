import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Storage } from 'billing-engine';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import pg from 'pg';

/** Where the CLI keeps data when no database is named: embedded SQLite in the working directory. */
export const DEFAULT_DATABASE = './data/billing.sqlite';

/**
 * Opens the storage a database URL names: `postgres://...` or `postgresql://...` for Postgres (a
 * `pg` pool), anything else as a SQLite file path (`:memory:` for a throw-away database). The
 * directory of a SQLite file is created when missing.
 */
export function openStorage(url: string = DEFAULT_DATABASE): { storage: Storage; describe: string } {
  if (/^postgres(ql)?:\/\//.test(url)) {
    const pool = new pg.Pool({ connectionString: url, max: 8 });
    const safe = url.replace(/\/\/[^@/]*@/, '//***@');
    return { storage: createPostgresStorage({ pool }), describe: `Postgres ${safe}` };
  }
  if (url !== ':memory:') mkdirSync(dirname(url), { recursive: true });
  return { storage: createSqliteStorage({ database: url }), describe: `SQLite ${url}` };
}
