/**
 * Whole-database dumps of a SQLite file, read through a connection of the test's own (read-only,
 * better-sqlite3), so that a test can say "this request changed nothing" without trusting the
 * engine's own reads. Every table in `sqlite_master` is read (internal `sqlite_sequence` included:
 * an insert that was committed and then deleted again still moves an AUTOINCREMENT counter), rows
 * ordered by the table's primary key (or by every column when it has none), values serialised
 * deterministically (blobs as hex, bigints as strings).
 */
import Database from 'better-sqlite3';

/** One table: its column names and its rows, in primary-key order. */
export interface TableDump {
  readonly columns: readonly string[];
  /** The primary-key columns (empty: every column orders and identifies a row). */
  readonly key: readonly string[];
  readonly rows: readonly (readonly DumpValue[])[];
}

/** A value as the dump keeps it: JSON-safe and compared exactly. */
export type DumpValue = string | number | null | { readonly blob: string } | { readonly bigint: string };

/** Every table of the database, by name, plus the schema SQL. */
export interface DatabaseDump {
  readonly schema: readonly string[];
  readonly tables: Readonly<Record<string, TableDump>>;
}

/** A read-only connection that dumps the database on demand. */
export interface DatabaseDumper {
  dump(): DatabaseDump;
  close(): void;
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function value(raw: unknown): DumpValue {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'string' || typeof raw === 'number') return raw;
  if (typeof raw === 'bigint') return { bigint: raw.toString() };
  if (Buffer.isBuffer(raw)) return { blob: raw.toString('hex') };
  throw new Error(`unexpected SQLite value ${typeof raw}`);
}

/**
 * Opens `file` read-only (it must exist; a WAL database is read with its WAL) and returns a dumper.
 * Each dump runs in one read transaction, so it is one consistent snapshot of committed data.
 */
export function openDatabaseDumper(file: string): DatabaseDumper {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const snapshot = db.transaction((): DatabaseDump => {
    const master = db
      .prepare(`select type, name, sql from sqlite_master where sql is not null order by type, name`)
      .all() as { type: string; name: string; sql: string }[];
    const tables: Record<string, TableDump> = {};
    const names = db.prepare(`select name from sqlite_master where type = 'table' order by name`).all() as {
      name: string;
    }[];
    for (const { name } of names) {
      const info = db.prepare(`pragma table_info(${quote(name)})`).all() as { name: string; pk: number }[];
      const columns = info.map((column) => column.name);
      const key = info
        .filter((column) => column.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((column) => column.name);
      const order = (key.length > 0 ? key : columns).map(quote).join(', ');
      const rows = db
        .prepare(`select ${columns.map(quote).join(', ')} from ${quote(name)} order by ${order}`)
        .raw()
        .all() as unknown[][];
      tables[name] = { columns, key, rows: rows.map((row) => row.map(value)) };
    }
    return { schema: master.map((row) => `${row.type} ${row.name}: ${row.sql}`), tables };
  });
  return { dump: () => snapshot(), close: () => db.close() };
}

/** Dumps `file` once through a fresh read-only connection. */
export function dumpDatabase(file: string): DatabaseDump {
  const dumper = openDatabaseDumper(file);
  try {
    return dumper.dump();
  } finally {
    dumper.close();
  }
}

/** The dump as one deterministic string (tables in name order, rows in key order). */
export function serializeDump(dump: DatabaseDump): string {
  const names = Object.keys(dump.tables).sort();
  return JSON.stringify({ schema: dump.schema, tables: names.map((name) => [name, dump.tables[name]]) });
}

/** One row that differs between two dumps. */
export interface RowChange {
  readonly table: string;
  readonly change: 'insert' | 'delete' | 'update';
  /** The row's key values, JSON. */
  readonly key: string;
  readonly before?: Readonly<Record<string, DumpValue>>;
  readonly after?: Readonly<Record<string, DumpValue>>;
}

function rowObject(columns: readonly string[], row: readonly DumpValue[]): Record<string, DumpValue> {
  return Object.fromEntries(columns.map((column, i) => [column, row[i] ?? null]));
}

function keyed(table: TableDump): Map<string, readonly DumpValue[]> {
  const indexes = (table.key.length > 0 ? table.key : table.columns).map((name) => table.columns.indexOf(name));
  const map = new Map<string, readonly DumpValue[]>();
  for (const row of table.rows) map.set(JSON.stringify(indexes.map((i) => row[i])), row);
  return map;
}

/** Every row inserted, deleted or changed from `before` to `after` (schema changes are a row of `sqlite_master`). */
export function diffDumps(before: DatabaseDump, after: DatabaseDump): RowChange[] {
  const changes: RowChange[] = [];
  const schemaBefore = new Set(before.schema);
  const schemaAfter = new Set(after.schema);
  for (const sql of before.schema) {
    if (!schemaAfter.has(sql)) changes.push({ table: 'sqlite_master', change: 'delete', key: JSON.stringify(sql) });
  }
  for (const sql of after.schema) {
    if (!schemaBefore.has(sql)) changes.push({ table: 'sqlite_master', change: 'insert', key: JSON.stringify(sql) });
  }
  const names = [...new Set([...Object.keys(before.tables), ...Object.keys(after.tables)])].sort();
  for (const name of names) {
    const a = before.tables[name];
    const b = after.tables[name];
    const columns = b?.columns ?? a?.columns ?? [];
    const rowsA = a ? keyed(a) : new Map<string, readonly DumpValue[]>();
    const rowsB = b ? keyed(b) : new Map<string, readonly DumpValue[]>();
    for (const [key, row] of rowsA) {
      const other = rowsB.get(key);
      if (other === undefined) {
        changes.push({ table: name, change: 'delete', key, before: rowObject(columns, row) });
      } else if (JSON.stringify(other) !== JSON.stringify(row)) {
        changes.push({
          table: name,
          change: 'update',
          key,
          before: rowObject(columns, row),
          after: rowObject(columns, other),
        });
      }
    }
    for (const [key, row] of rowsB) {
      if (!rowsA.has(key)) changes.push({ table: name, change: 'insert', key, after: rowObject(columns, row) });
    }
  }
  return changes;
}

/**
 * A change to the database that a REJECTED request may make by design. Each one names its table,
 * the only kind of change allowed (inserts: nothing existing may be touched), which new rows qualify,
 * and why. Anything a rejected request changes that no allowance in force covers fails the test.
 */
export interface DumpAllowance {
  readonly name: string;
  readonly why: string;
  readonly table: string;
  readonly change: 'insert';
  readonly row: (row: Readonly<Record<string, DumpValue>>) => boolean;
}

/** The changes no allowance covers. */
export function unexpectedChanges(changes: readonly RowChange[], allowances: readonly DumpAllowance[]): RowChange[] {
  return changes.filter(
    (change) =>
      !allowances.some(
        (allowance) =>
          allowance.table === change.table &&
          allowance.change === change.change &&
          change.after !== undefined &&
          allowance.row(change.after),
      ),
  );
}

/** A short, readable account of changes for a failure message (long values cut). */
export function describeChanges(changes: readonly RowChange[]): string {
  const cut = (row: Readonly<Record<string, DumpValue>> | undefined) =>
    row === undefined ? '' : JSON.stringify(row).slice(0, 600);
  return changes
    .map((c) =>
      c.change === 'update'
        ? `update ${c.table} ${c.key}: ${cut(c.before)} -> ${cut(c.after)}`
        : `${c.change} ${c.table} ${c.key}: ${cut(c.after ?? c.before)}`,
    )
    .join('\n');
}

/**
 * The rows of one site: every table with a `site_id` column keeps only that site's rows, and the
 * `sites` table only that site's row. Tables without a site (schema bookkeeping, AUTOINCREMENT
 * counters) are dropped: ids are global, so another site's inserts move the counters legitimately.
 */
export function siteSlice(dump: DatabaseDump, siteId: number): DatabaseDump {
  const tables: Record<string, TableDump> = {};
  for (const [name, table] of Object.entries(dump.tables)) {
    const column = name === 'sites' ? table.columns.indexOf('id') : table.columns.indexOf('site_id');
    if (column === -1) continue;
    tables[name] = { ...table, rows: table.rows.filter((row) => row[column] === siteId) };
  }
  return { schema: dump.schema, tables };
}
