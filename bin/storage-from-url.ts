import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Storage } from 'billing-engine';
import { ConfigError, DEFAULT_DATABASE } from './config.js';

export { DEFAULT_DATABASE };

/** A storage driver package that is not installed; the message names what to install. */
export class MissingDriverError extends Error {
  override readonly name = 'MissingDriverError';
}

/** The name of the package a failed import could not find, when that is why it failed. */
export function missingPackage(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  const match = /Cannot find (?:package|module) '([^']+)'/.exec((error as Error).message);
  if (match?.[1] === undefined) return undefined;
  // A bare specifier names its package (and a scoped one its scope too); a path names itself.
  const parts = match[1].split('/');
  return match[1].startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * Imports a module a storage needs; when a package it needs is not installed, fails with one
 * line naming the packages to install.
 */
async function load<T>(importer: () => Promise<T>, what: string, packages: readonly string[]): Promise<T> {
  try {
    return await importer();
  } catch (error) {
    const missing = missingPackage(error);
    if (missing === undefined) throw error;
    throw new MissingDriverError(
      `${what} needs the package '${missing}', which is not installed: run npm install ${packages.join(' ')}`,
    );
  }
}

/**
 * Opens the storage a database URL names: `postgres://...` or `postgresql://...` for Postgres (a
 * `pg` pool), anything else as a SQLite file path (`:memory:` for a throw-away database). The
 * directory of a SQLite file is created when missing. Only the driver the URL needs is loaded.
 */
export async function openStorage(url: string = DEFAULT_DATABASE): Promise<{ storage: Storage; describe: string }> {
  if (/^postgres(ql)?:\/\//.test(url)) {
    const what = 'a postgres:// database';
    const packages = ['pg', 'kysely'];
    const pg = await load(() => import('pg'), what, packages);
    const { createPostgresStorage } = await load(() => import('billing-engine/adapters/postgres'), what, packages);
    const Pool = (pg.default ?? pg).Pool;
    // `?schema=name` picks the schema of the engine's tables (default `billing`); pg never sees it.
    const parsed = new URL(url);
    const schema = parsed.searchParams.get('schema') ?? undefined;
    parsed.searchParams.delete('schema');
    // Pipelined clients: the steps of a batch of due work then share round trips (issue 18).
    const config = { connectionString: parsed.toString(), max: 8, pipeline: true };
    const pool = new Pool(config);
    pool.on('error', () => {});
    const safe = url.replace(/\/\/[^@/]*@/, '//***@');
    return {
      storage: createPostgresStorage({ pool, ...(schema === undefined ? {} : { schema }) }),
      describe: `Postgres ${safe}`,
    };
  }
  const what = 'a SQLite database';
  const packages = ['better-sqlite3', 'kysely'];
  const { createSqliteStorage } = await load(() => import('billing-engine/adapters/sqlite'), what, packages);
  if (url !== ':memory:') makeDirectoryFor(url);
  // Without better-sqlite3 the adapter fails here with a BillingError that says to install it.
  return { storage: createSqliteStorage({ database: url }), describe: `SQLite ${url}` };
}

/** Creates the directory of a SQLite file, or says which path is in the way. */
function makeDirectoryFor(file: string): void {
  const directory = dirname(resolve(file));
  try {
    mkdirSync(directory, { recursive: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'ENOTDIR' && code !== 'EEXIST') {
      throw new ConfigError(
        `--db ${file}: cannot create the directory ${directory} (${(error as Error).message}); choose another path.`,
      );
    }
    let blocker = directory;
    while (dirname(blocker) !== blocker && !isFile(blocker)) blocker = dirname(blocker);
    throw new ConfigError(
      `--db ${file}: ${blocker} is a file, not a directory; give a database path inside a directory (e.g. ./data/billing.sqlite).`,
    );
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
