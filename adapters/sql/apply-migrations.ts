/**
 * Applies pending migrations inside one transaction: the dialect's migration lock first (so that
 * two processes starting at once do not both create the tables), then the bookkeeping table, then
 * every migration not yet recorded in `billing_migrations`, each recorded as it is applied.
 */
import type { Kysely } from 'kysely';
import { decodeInteger, type ValueEncoders } from './codecs.js';
import type { DialectHooks } from './dialect-hooks.js';
import { columnTypes, finishTable } from './migrations/ddl.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';
import type { Database } from './schema.js';

/** Runs the migrations `db` (bound to an open transaction) has not applied yet; returns the ids it applied. */
export async function applyMigrations(
  db: Kysely<Database>,
  hooks: DialectHooks,
  encode: ValueEncoders,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  checkOrder(migrations);
  await hooks.lockMigrations(db);
  const types = columnTypes(hooks.name);
  await finishTable(
    db.schema
      .createTable('billing_migrations')
      .ifNotExists()
      .addColumn('id', 'integer', (col) => col.primaryKey())
      .addColumn('name', types.text, (col) => col.notNull())
      .addColumn('applied_at', types.instant, (col) => col.notNull()),
    hooks.name,
  ).execute();
  const rows = await db.selectFrom('billing_migrations').select('id').execute();
  // Ids this package does not know (a newer version migrated the database) are left alone: the
  // migrations are additive, so older code keeps working during a rolling deploy.
  const applied = new Set(rows.map((row) => decodeInteger(row.id)));
  const done: number[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.id)) continue;
    await migration.up(db as unknown as Kysely<unknown>, hooks.name);
    await db
      .insertInto('billing_migrations')
      .values({ id: migration.id, name: migration.name, applied_at: encode.instant(new Date()) })
      .execute();
    done.push(migration.id);
  }
  return done;
}

function checkOrder(migrations: readonly Migration[]): void {
  let previous = 0;
  for (const migration of migrations) {
    if (!Number.isSafeInteger(migration.id) || migration.id <= previous) {
      throw new TypeError(`Migration ids must be positive and increasing; ${migration.id} follows ${previous}.`);
    }
    previous = migration.id;
  }
}
