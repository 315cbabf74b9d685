import { shiftFrom } from './add-interval.js';
import { civilDayNumber } from './civil-calendar.js';
import { assertInstant, assertSafeInteger } from './instant.js';
import { assertInterval, type Interval } from './interval.js';
import { assertTimeZone } from './time-zone.js';
import { toWallClock } from './wall-clock.js';

/**
 * One billing period, half-open: it contains `start` and every instant up to, but not including,
 * `end`. The next period starts exactly at `end`, so every instant belongs to exactly one period.
 */
export interface BillingPeriod {
  readonly start: Date;
  readonly end: Date;
}

/**
 * Boundary `index` of the periods anchored at `anchor`: anchor + index × interval on the wall clock
 * of `zone` (the engine's default rule). Each boundary is computed from the anchor, never
 * from the previous boundary, so a Jan 31 anchor renews Feb 28, Mar 31, Apr 30 and never drifts.
 * `index` 0 is the anchor itself; negative indexes count back before it.
 */
export function periodBoundary(anchor: Date, index: number, interval: Interval, zone: string): Date {
  assertInstant(anchor);
  assertSafeInteger(index, 'Period index');
  assertInterval(interval);
  assertTimeZone(zone);
  return shiftFrom(anchor, toWallClock(anchor, zone), interval, index, zone);
}

/**
 * Period `index` of the periods anchored at `anchor`: `[boundary(index), boundary(index + 1))`.
 * Consecutive periods share their boundary, so the periods tile time without gaps or overlaps.
 */
export function billingPeriod(anchor: Date, index: number, interval: Interval, zone: string): BillingPeriod {
  assertInstant(anchor);
  assertSafeInteger(index, 'Period index');
  assertInterval(interval);
  assertTimeZone(zone);
  const wall = toWallClock(anchor, zone);
  return {
    start: shiftFrom(anchor, wall, interval, index, zone),
    end: shiftFrom(anchor, wall, interval, index + 1, zone),
  };
}

/**
 * The index `n` of the period anchored at `anchor` that contains `instant`, i.e.
 * `boundary(n) <= instant < boundary(n + 1)`; negative for instants before the anchor. It estimates
 * `n` from the calendar months or days elapsed on the local wall clock and then steps to the right
 * period, so its cost does not grow with the number of periods elapsed.
 */
export function periodIndexAt(anchor: Date, instant: Date, interval: Interval, zone: string): number {
  assertInstant(anchor);
  assertInstant(instant);
  assertInterval(interval);
  assertTimeZone(zone);
  const start = toWallClock(anchor, zone);
  const at = toWallClock(instant, zone);
  const elapsed =
    interval.unit === 'month'
      ? (at.year - start.year) * 12 + (at.month - start.month)
      : civilDayNumber(at) - civilDayNumber(start);
  const target = instant.getTime();
  const boundary = (n: number): number => shiftFrom(anchor, start, interval, n, zone).getTime();
  // The estimate counts whole calendar months or days, ignoring where in them the instant and the
  // anchor fall: boundary n + 1 lies in a later unit than the instant, so the estimate is never too
  // low, and at most one too high (the instant is earlier in its month or day than the anchor).
  // The first loop runs at most once; the second is a safety net.
  let n = Math.floor(elapsed / interval.count);
  while (boundary(n) > target) n -= 1;
  while (boundary(n + 1) <= target) n += 1;
  return n;
}
