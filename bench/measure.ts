/**
 * Time boxes, medians and number formatting shared by the sections. A figure is always a rate
 * over a timed run (work done / wall time), never a single operation's time, so timer resolution
 * and scheduling noise average out.
 */
import { performance } from 'node:perf_hooks';

/** One timed run: how much work was done in how long. */
export interface Throughput {
  readonly ops: number;
  readonly seconds: number;
  readonly perSecond: number;
}

/** The median of several timed runs, with the spread. */
export interface RateSummary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** Every run's rate, in the order they ran. */
  readonly runs: readonly number[];
  /** Total operations over all timed runs (warm-up excluded). */
  readonly ops: number;
}

/** Does some work and says how many operations it was (usually 1); may be synchronous. */
export type Step = () => number | Promise<number>;

/** Runs one timed run of `ms` milliseconds and returns its throughput. */
export type Runner = (ms: number) => Promise<Throughput>;

/**
 * Calls `step` back to back until `ms` have passed. A synchronous step is not awaited, so a raw
 * better-sqlite3 loop pays no promise overhead that it would not pay in real code.
 */
export async function timeBox(step: Step, ms: number): Promise<Throughput> {
  let ops = 0;
  const start = performance.now();
  const deadline = start + ms;
  let now = start;
  while (now < deadline) {
    const done = step();
    ops += typeof done === 'number' ? done : await done;
    now = performance.now();
  }
  return rate(ops, now - start);
}

/**
 * Runs every step in its own loop, all at once, until `ms` have passed; the rate is the total of
 * all loops over the wall time until the last loop's step in flight finished.
 */
export async function timeBoxConcurrent(steps: readonly (() => Promise<number>)[], ms: number): Promise<Throughput> {
  const start = performance.now();
  const deadline = start + ms;
  const counts = await Promise.all(
    steps.map(async (step) => {
      let ops = 0;
      while (performance.now() < deadline) ops += await step();
      return ops;
    }),
  );
  return rate(
    counts.reduce((a, b) => a + b, 0),
    performance.now() - start,
  );
}

/** Times `work` once, which returns how many operations it did. */
export async function timeOnce(work: () => Promise<number> | number): Promise<Throughput> {
  const start = performance.now();
  const ops = await work();
  return rate(ops, performance.now() - start);
}

/** The throughput of `ops` operations in `elapsedMs`. */
export function rate(ops: number, elapsedMs: number): Throughput {
  const seconds = elapsedMs / 1000;
  return { ops, seconds, perSecond: seconds > 0 ? ops / seconds : 0 };
}

/** Options of {@link comparePaired}. */
export interface PairedOptions {
  readonly warmUpMs: number;
  readonly timeBoxMs: number;
  readonly runs: number;
}

/**
 * Measures several contenders (the engine and its raw baseline) in the same conditions: each is
 * warmed up, then their timed runs alternate (A B A B ...), so that a slow spell of the machine
 * (CI running beside us) falls on both rather than on whichever happened to run then.
 */
export async function comparePaired<K extends string>(
  contenders: Readonly<Record<K, Runner>>,
  options: PairedOptions,
): Promise<Record<K, RateSummary>> {
  const keys = Object.keys(contenders) as K[];
  for (const key of keys) await contenders[key](options.warmUpMs);
  const runs = new Map<K, Throughput[]>(keys.map((key) => [key, []]));
  for (let i = 0; i < options.runs; i++) {
    for (const key of keys) runs.get(key)!.push(await contenders[key](options.timeBoxMs));
  }
  const out = {} as Record<K, RateSummary>;
  for (const key of keys) out[key] = summarize(runs.get(key)!);
  return out;
}

/** Median, min and max of a list of timed runs. */
export function summarize(runs: readonly Throughput[]): RateSummary {
  const rates = runs.map((r) => r.perSecond);
  return {
    median: median(rates),
    min: Math.min(...rates),
    max: Math.max(...rates),
    runs: rates,
    ops: runs.reduce((sum, r) => sum + r.ops, 0),
  };
}

/** The median of a non-empty list (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The `p`-th percentile (0-100) of values, nearest-rank. */
export function percentile(sortedAscending: readonly number[], p: number): number {
  if (sortedAscending.length === 0) return Number.NaN;
  const rank = Math.min(sortedAscending.length, Math.max(1, Math.ceil((p / 100) * sortedAscending.length)));
  return sortedAscending[rank - 1]!;
}

/** A rate with thousands separators and no decimals (`12,345`); small rates keep one decimal. */
export function formatRate(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value >= 100
    ? Math.round(value).toLocaleString('en-US')
    : value.toLocaleString('en-US', { maximumFractionDigits: 1 });
}

/** A summary as `median (min-max)`, or just the median for a single run. */
export function formatSummary(summary: RateSummary): string {
  if (summary.runs.length <= 1) return formatRate(summary.median);
  return `${formatRate(summary.median)} (${formatRate(summary.min)}-${formatRate(summary.max)})`;
}

/** A ratio as `2.41x`. */
export function formatRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a';
}

/** Bytes as MiB with one decimal. */
export function formatMiB(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Milliseconds with enough precision for sub-millisecond latencies. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  return ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(1)} ms`;
}
