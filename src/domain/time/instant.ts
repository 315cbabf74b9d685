import { invalid } from '../../errors.js';

/**
 * The largest distance from the epoch, in milliseconds, that a JS `Date` can hold (±100,000,000
 * days). Calendar helpers refuse results beyond it rather than returning an invalid `Date`.
 */
export const MAX_INSTANT_MS = 8.64e15;

/** Milliseconds in 24 hours of elapsed time (not a calendar day, which may be 23 or 25 hours long). */
export const MS_PER_DAY = 86_400_000;

/**
 * Throws `<label>: is not a valid date.` unless `value` is a `Date` holding a real instant. The time
 * core checks its inputs with it so that an invalid `Date` fails where it enters instead of turning
 * every later boundary into `NaN`.
 */
export function assertInstant(value: unknown, label = 'Date'): asserts value is Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw invalid(`${label}: is not a valid date.`);
}

/**
 * Wraps an epoch-millisecond result of calendar arithmetic in a `Date`, throwing
 * `Date: is out of range.` when it lies beyond what a `Date` can hold (huge indexes or counts).
 */
export function instantFromMs(ms: number): Date {
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_INSTANT_MS) throw invalid('Date: is out of range.');
  return new Date(ms);
}

/**
 * Throws `<label>: must be an integer.` unless `value` is a safe integer. Period indexes and
 * interval multipliers are counted, never fractional, and must stay exact in a JS number.
 */
export function assertSafeInteger(value: unknown, label: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw invalid(`${label}: must be an integer.`);
}
