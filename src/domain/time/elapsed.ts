import { assertInstant } from './instant.js';

/**
 * Milliseconds from `a` to `b` (negative when `b` is earlier): the elapsed time proration divides,
 * exact because instants have millisecond precision.
 */
export function millisecondsBetween(a: Date, b: Date): number {
  assertInstant(a);
  assertInstant(b);
  return b.getTime() - a.getTime();
}

/**
 * Whole seconds from `a` to `b`, truncated toward zero so that swapping the arguments only flips
 * the sign. Elapsed time, not wall-clock time: a local day across a DST change is 82,800 or 90,000
 * seconds.
 */
export function secondsBetween(a: Date, b: Date): number {
  return Math.trunc(millisecondsBetween(a, b) / 1000);
}
