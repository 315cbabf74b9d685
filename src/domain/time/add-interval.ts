import { addCivilDays, addCivilMonths } from './civil-calendar.js';
import { assertInstant, assertSafeInteger } from './instant.js';
import { assertInterval, type Interval } from './interval.js';
import { assertTimeZone } from './time-zone.js';
import { fromWallClock, toWallClock, type WallClock } from './wall-clock.js';

/**
 * `instant` moved by `count` × `interval` on the wall clock of `zone` (back when `count` is
 * negative). Months move the local year and month and clamp the local day to the target month's
 * length (Jan 31 + 1 month = Feb 28 or 29); days move the local calendar date. The local time of
 * day is kept, so a DST change never moves a renewal's local time; a local time that does not exist
 * or happens twice on the target day is resolved as {@link fromWallClock} documents. Clamping is
 * done once, from `instant`'s own day, so repeated use from a fixed anchor never drifts.
 */
export function addInterval(instant: Date, interval: Interval, count: number, zone: string): Date {
  assertInstant(instant);
  assertInterval(interval);
  assertSafeInteger(count, 'Count');
  assertTimeZone(zone);
  return shiftFrom(instant, toWallClock(instant, zone), interval, count, zone);
}

/**
 * `origin`, whose wall clock in `zone` is `wall`, moved by `steps` × `interval`: the body of
 * {@link addInterval} for callers that already hold validated inputs (period arithmetic reads the
 * anchor's wall clock once, not once per period).
 */
export function shiftFrom(origin: Date, wall: WallClock, interval: Interval, steps: number, zone: string): Date {
  const units = steps * interval.count;
  assertSafeInteger(units, 'Count');
  // Not converted back: an origin at the second occurrence of a repeated local time would become the first.
  if (units === 0) return new Date(origin.getTime());
  const date = interval.unit === 'month' ? addCivilMonths(wall, units) : addCivilDays(wall, units);
  return fromWallClock({ ...wall, ...date }, zone);
}
