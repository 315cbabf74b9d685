/**
 * DDL helpers shared by the migrations, so that every table gets the same tenancy shape and every
 * kind of value the same column type in a dialect (the value mapping is in `../codecs.ts`).
 */
import { type ColumnDataType, type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { SqlDialectName } from '../codecs.js';

/** Column types of one dialect, by kind of value. */
export interface ColumnTypes {
  /** Ids and references to them. */
  readonly id: ColumnDataType;
  /** Integer minor units of money. */
  readonly money: ColumnDataType;
  /** Exact decimals (quantities, rates): TEXT on SQLite, never REAL. */
  readonly decimal: ColumnDataType;
  /** Instants: epoch ms on SQLite, timestamptz(3) on Postgres. */
  readonly instant: ColumnDataType;
  readonly boolean: ColumnDataType;
  readonly json: ColumnDataType;
  readonly integer: ColumnDataType;
  /** Counts that may outgrow 32 bits (quantities, usage balances). */
  readonly bigInteger: ColumnDataType;
  readonly text: ColumnDataType;
}

/** The column types of `dialect`. SQLite's are the ones its STRICT tables accept. */
export function columnTypes(dialect: SqlDialectName): ColumnTypes {
  return dialect === 'sqlite'
    ? {
        id: 'integer',
        money: 'integer',
        decimal: 'text',
        instant: 'integer',
        boolean: 'integer',
        json: 'text',
        integer: 'integer',
        bigInteger: 'integer',
        text: 'text',
      }
    : {
        id: 'bigint',
        money: 'bigint',
        decimal: 'numeric',
        instant: 'timestamptz(3)',
        boolean: 'boolean',
        json: 'jsonb',
        integer: 'integer',
        bigInteger: 'bigint',
        text: 'text',
      };
}

/**
 * Starts a tenant table: a database-assigned `id` and a `site_id` that references `sites` with
 * `ON DELETE CASCADE`. On Postgres the primary key is `(site_id, id)`, so that every unique index
 * starts with the tenant (and the table could be distributed by `site_id`); SQLite needs its
 * rowid `INTEGER PRIMARY KEY` for ids and gets a unique `(site_id, id)` for composite references.
 */
export function createTenantTable(
  db: Kysely<unknown>,
  dialect: SqlDialectName,
  table: string,
): CreateTableBuilder<string, 'id' | 'site_id'> {
  const types = columnTypes(dialect);
  const withId =
    dialect === 'sqlite'
      ? // AUTOINCREMENT: ids are never reused, even after the newest row is deleted.
        db.schema.createTable(table).addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
      : db.schema.createTable(table).addColumn('id', 'bigint', (col) => col.generatedByDefaultAsIdentity().notNull());
  const withSite = withId.addColumn('site_id', types.id, (col) =>
    col.notNull().references('sites.id').onDelete('cascade'),
  );
  return dialect === 'sqlite'
    ? withSite.addUniqueConstraint(`${table}_site_id_id_key`, ['site_id', 'id'])
    : withSite.addPrimaryKeyConstraint(`${table}_pkey`, ['site_id', 'id']);
}

/** Ends a CREATE TABLE: SQLite tables are STRICT, so a float can never land in an integer column. */
export function finishTable<TB extends string, C extends string>(
  builder: CreateTableBuilder<TB, C>,
  dialect: SqlDialectName,
): CreateTableBuilder<TB, C> {
  return dialect === 'sqlite' ? builder.modifyEnd(sql`strict`) : builder;
}
