/**
 * Statements compiled once (issue 18): built with placeholder arguments on first use, then run
 * with each call's values in the same SQL text. Checked on a plain SQLite database through Kysely.
 */
import Database from 'better-sqlite3';
import { type CompiledQuery, Kysely, type QueryResult, SqliteDialect, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compiledOnce } from '../../adapters/sql/compiled-once.js';
import type { Database as Schema } from '../../adapters/sql/schema.js';

describe('compiledOnce', () => {
  let db: Kysely<Schema>;
  const seen: string[] = [];

  beforeEach(async () => {
    seen.length = 0;
    db = new Kysely<Schema>({
      dialect: new SqliteDialect({ database: new Database(':memory:') }),
      log: (event) => {
        if (event.level === 'query') seen.push(event.query.sql);
      },
    });
    await sql`create table customers (site_id integer, id integer, first_name text, state text)`.execute(db);
    await sql`insert into customers values (1, 1, 'Ada', 'active'), (1, 2, 'Bo', 'gone'), (2, 1, 'Cy', 'active')`.execute(
      db,
    );
    seen.length = 0;
  });

  afterEach(async () => {
    await db.destroy();
  });

  const context = () => ({ db, hooks: { name: 'sqlite' } });
  const names = (result: QueryResult<unknown>) => result.rows.map((row) => (row as { first_name: string }).first_name);

  it('runs each call with its own values in one SQL text, keeping the constants the builder wrote', async () => {
    const activeById = compiledOnce((db, siteId: number, id: number) =>
      db
        .selectFrom('customers')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .where(sql<string>`state`, '=', 'active'),
    );
    expect(names(await activeById.run(context(), 1, 1))).toEqual(['Ada']);
    expect(names(await activeById.run(context(), 2, 1))).toEqual(['Cy']);
    // The constant 'active' stays a parameter of its own: customer 2 of site 1 is gone.
    expect(names(await activeById.run(context(), 1, 2))).toEqual([]);
    expect(new Set(seen).size).toBe(1);
    expect(seen[0]).toContain('"site_id" = ?');
  });

  it('gives an argument used twice to both of its parameters', async () => {
    const sameIdAndSite = compiledOnce((db, n: number) =>
      db.selectFrom('customers').selectAll().where('site_id', '=', n).where('id', '=', n),
    );
    expect(names(await sameIdAndSite.run(context(), 1))).toEqual(['Ada']);
    expect(names(await sameIdAndSite.run(context(), 2))).toEqual([]);
  });

  it('refuses, on first use, a builder that does not make every argument a parameter', async () => {
    const ignoresOne = compiledOnce((db, siteId: number, _unused: number) =>
      db.selectFrom('customers').selectAll().where('site_id', '=', siteId),
    );
    await expect(async () => ignoresOne.run(context(), 1, 2)).rejects.toThrow(
      /1 of the 2 arguments did not become parameters/,
    );
    // A rest parameter needs its arity: without it no argument is expected, and a call with one is refused.
    const rest = compiledOnce((db, ...values: unknown[]) =>
      db
        .selectFrom('customers')
        .selectAll()
        .where('site_id', '=', values[0] as number),
    );
    await expect(async () => rest.run(context(), 1)).rejects.toThrow(/expects 0 arguments, not 1/);
    const withArity = compiledOnce(
      (db, ...values: unknown[]) =>
        db
          .selectFrom('customers')
          .selectAll()
          .where('site_id', '=', values[0] as number),
      1,
    );
    expect(names(await withArity.run(context(), 2))).toEqual(['Cy']);
  });

  it('compiles once per dialect name, so two dialects never share a text', async () => {
    const byId = compiledOnce((db, id: number) => db.selectFrom('customers').select('first_name').where('id', '=', id));
    await byId.run(context(), 1);
    // Another dialect name compiles again (here with the same compiler, so the same text).
    const other = await byId.run({ db, hooks: { name: 'other' } }, 2);
    expect(names(other)).toEqual(['Bo']);
    expect(seen).toHaveLength(2);
    const compiled: CompiledQuery = db.selectFrom('customers').select('first_name').where('id', '=', 1).compile();
    expect(seen[0]).toBe(compiled.sql);
  });
});
