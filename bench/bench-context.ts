/**
 * What every section receives: the parameters, the report to write to, Postgres when it can be
 * used (or why not), and a temp directory for SQLite files that the run removes at the end.
 */
import type { BenchConfig } from './bench-config.js';
import type { BenchReport } from './bench-report.js';
import type { BenchPostgres } from './postgres-bench-db.js';

/** Postgres as the sections see it: a server to make schemas on, or the reason it is skipped. */
export type PostgresAvailability =
  | { readonly available: true; readonly server: BenchPostgres }
  | { readonly available: false; readonly reason: string };

/** The shared context of the sections. */
export interface BenchContext {
  readonly config: BenchConfig;
  readonly report: BenchReport;
  readonly postgres: PostgresAvailability;
  /** A directory for database files; removed when the run ends. */
  readonly tempDir: string;
}
