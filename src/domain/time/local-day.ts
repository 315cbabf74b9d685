import { invalid } from '../../errors.js';
import { addCivilDays, type CivilDate, formatCivilDate, isValidCivilDate } from './civil-calendar.js';
import { assertInstant, instantFromMs } from './instant.js';
import { assertTimeZone } from './time-zone.js';
import { fromWallClock, toWallClock } from './wall-clock.js';

/**
 * The first instant of the local day (in `zone`) that contains `instant`. Usually local midnight;
 * where a DST gap swallows midnight (São Paulo, 2018-11-04) it is the first local time that exists
 * (01:00), so the result is always on the same local date as `instant` and never after it.
 */
export function startOfLocalDay(instant: Date, zone: string): Date {
  assertInstant(instant);
  assertTimeZone(zone);
  return startOfCivilDay(toWallClock(instant, zone), zone);
}

/**
 * The last millisecond of the local day (in `zone`) that contains `instant`: one millisecond before
 * the next local day starts. Computed that way rather than as 23:59:59.999, which a DST change at
 * midnight can make happen twice or not at all; days are 23, 24 or 25 hours long.
 */
export function endOfLocalDay(instant: Date, zone: string): Date {
  assertInstant(instant);
  assertTimeZone(zone);
  const next = startOfCivilDay(addCivilDays(toWallClock(instant, zone), 1), zone);
  return instantFromMs(next.getTime() - 1);
}

/** The local date of `instant` in `zone` as `YYYY-MM-DD`, e.g. what a customer's invoice shows. */
export function localDateString(instant: Date, zone: string): string {
  return formatCivilDate(toWallClock(instant, zone));
}

/**
 * The start instant (see {@link startOfLocalDay}) of the local date `YYYY-MM-DD` in `zone`. Throws
 * `<label>: is not a valid date.` for anything else, including impossible dates such as 2023-02-30
 * and non-padded ones such as 2023-2-3.
 */
export function parseLocalDate(text: unknown, zone: string, label = 'Date'): Date {
  assertTimeZone(zone);
  const match = typeof text === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(text) : null;
  const date = match === null ? undefined : { year: Number(match[1]), month: Number(match[2]), day: Number(match[3]) };
  if (date === undefined || !isValidCivilDate(date.year, date.month, date.day)) {
    throw invalid(`${label}: is not a valid date.`);
  }
  return startOfCivilDay(date, zone);
}

/**
 * The first instant of a local date in `zone`: its midnight, or the first existing local time when
 * midnight falls in a DST gap (the gap rule of {@link fromWallClock} moves it forward, within the day).
 */
export function startOfCivilDay(date: CivilDate, zone: string): Date {
  return fromWallClock(
    { year: date.year, month: date.month, day: date.day, hour: 0, minute: 0, second: 0, millisecond: 0 },
    zone,
  );
}
