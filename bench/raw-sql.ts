/**
 * The raw baselines' plumbing: a unit of raw work is written once, as a generator that yields the
 * statements it runs (and the transaction boundaries) and receives their rows, and a driver per
 * database runs it with plain driver calls: better-sqlite3 prepared statements inside
 * `db.transaction(...).immediate()` (synchronously, as raw better-sqlite3 code would), or `pg`
 * `client.query` between `BEGIN` and `COMMIT` on one client. So both databases run the very same
 * statements, and the engine is compared with exactly what it asks the database to do.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type pg from 'pg';

/** A row as a driver returns it. */
export type RawRow = Readonly<Record<string, unknown>>;

/** What a raw unit of work yields: a statement to run, or a transaction boundary. */
export type RawOp =
  | { readonly kind: 'begin' }
  | { readonly kind: 'commit' }
  | { readonly kind: 'query'; readonly text: string; readonly values: readonly unknown[] };

/** A raw unit of work: yields ops, receives each statement's rows, returns its result. */
export type RawWork<T> = Generator<RawOp, T, readonly RawRow[]>;

/** The `begin` op. */
export const BEGIN: RawOp = { kind: 'begin' };
/** The `commit` op. */
export const COMMIT: RawOp = { kind: 'commit' };

/** A statement op; `?` placeholders, numbered for Postgres by the driver. */
export function query(text: string, values: readonly unknown[]): RawOp {
  return { kind: 'query', text, values };
}

/**
 * How values look in each dialect's columns, mirroring `adapters/sql/codecs.ts`: instants are
 * epoch ms on SQLite and `Date`s (timestamptz) on Postgres, booleans 0/1 or true/false; ids and
 * money come back as numbers from better-sqlite3 and as strings from pg.
 */
export interface RawDialect {
  readonly name: 'sqlite' | 'postgres';
  instant(ms: number): number | Date;
  bool(value: boolean): number | boolean;
  /** A stored instant as epoch ms. */
  ms(value: unknown): number;
  /** A stored integer as a number. */
  int(value: unknown): number;
  /** A stored JSON document as an object (TEXT on SQLite, already parsed jsonb from pg). */
  json(value: unknown): Record<string, unknown>;
}

/** The SQLite value mapping. */
export const SQLITE_DIALECT: RawDialect = {
  name: 'sqlite',
  instant: (ms) => ms,
  bool: (value) => (value ? 1 : 0),
  ms: (value) => Number(value),
  int: (value) => Number(value),
  json: (value) => JSON.parse(String(value)) as Record<string, unknown>,
};

/** The Postgres value mapping. */
export const POSTGRES_DIALECT: RawDialect = {
  name: 'postgres',
  instant: (ms) => new Date(ms),
  bool: (value) => value,
  ms: (value) => (value instanceof Date ? value.getTime() : Date.parse(String(value))),
  int: (value) => Number(value),
  json: (value) =>
    typeof value === 'string' ? (JSON.parse(value) as Record<string, unknown>) : (value as Record<string, unknown>),
};

/**
 * Runs raw work on better-sqlite3, synchronously. Each `begin`...`commit` span runs inside one
 * `db.transaction(...).immediate()` (BEGIN IMMEDIATE, as the adapter opens its transactions), and
 * statements are prepared once per text and reused.
 */
export function runSqlite<T>(
  db: BetterSqlite3.Database,
  work: RawWork<T>,
  cache: Map<string, BetterSqlite3.Statement>,
): T {
  const exec = (op: RawOp): readonly RawRow[] => {
    if (op.kind !== 'query') throw new Error(`Unexpected ${op.kind} inside a transaction.`);
    let statement = cache.get(op.text);
    if (statement === undefined) {
      statement = db.prepare(op.text);
      cache.set(op.text, statement);
    }
    if (statement.reader) return statement.all(...op.values) as RawRow[];
    statement.run(...op.values);
    return [];
  };
  let step = work.next([]);
  while (!step.done) {
    if (step.value.kind !== 'begin') throw new Error('Raw work must open a transaction before a statement.');
    const inTransaction = db.transaction(() => {
      let inner = work.next([]);
      while (!inner.done && inner.value.kind !== 'commit') inner = work.next(exec(inner.value));
      return inner;
    });
    const afterCommit = inTransaction.immediate();
    if (afterCommit.done) return afterCommit.value;
    step = work.next([]);
  }
  return step.value;
}

/** Runs raw work on one `pg` client: `begin isolation level read committed` ... `commit`, rollback on error. */
export async function runPostgres<T>(client: pg.PoolClient | pg.Client, work: RawWork<T>): Promise<T> {
  let step = work.next([]);
  let open = false;
  try {
    while (!step.done) {
      const op = step.value;
      if (op.kind === 'begin') {
        await client.query('begin isolation level read committed');
        open = true;
        step = work.next([]);
      } else if (op.kind === 'commit') {
        await client.query('commit');
        open = false;
        step = work.next([]);
      } else {
        const result = await client.query(numbered(op.text), op.values as unknown[]);
        step = work.next(result.rows as RawRow[]);
      }
    }
    return step.value;
  } catch (error) {
    if (open) await client.query('rollback').catch(() => {});
    throw error;
  }
}

const numberedCache = new Map<string, string>();

/** `?` placeholders as `$1, $2, ...` (the statements here have no `?` inside literals). */
export function numbered(text: string): string {
  let out = numberedCache.get(text);
  if (out === undefined) {
    let n = 0;
    out = text.replace(/\?/g, () => `$${++n}`);
    numberedCache.set(text, out);
  }
  return out;
}

/** Adds `months` calendar months to a UTC instant, clamping the day to the month's length (Jan 31 + 1 = Feb 28). */
export function addMonthsUtc(ms: number, months: number): number {
  const d = new Date(ms);
  const day = d.getUTCDate();
  const first = Date.UTC(
    d.getUTCFullYear(),
    d.getUTCMonth() + months,
    1,
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  );
  const f = new Date(first);
  const last = new Date(Date.UTC(f.getUTCFullYear(), f.getUTCMonth() + 1, 0)).getUTCDate();
  f.setUTCDate(Math.min(day, last));
  return f.getTime();
}
