import { invalid } from '../../errors.js';
import { isValidCivilDate, utcMs } from './civil-calendar.js';
import { instantFromMs } from './instant.js';
import { startOfCivilDay } from './local-day.js';
import { assertTimeZone } from './time-zone.js';
import { fromWallClock } from './wall-clock.js';

// date, then optionally a time (seconds and fraction optional), then optionally an offset (only
// after a time); a space may precede the offset so the webhook format also parses.
const INSTANT_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?: ?(Z|[+-]\d{2}(?::?\d{2})?))?)?$/i;

/**
 * Reads a date or time sent by a client, throwing `<label>: is not a valid date.` for anything it
 * does not accept. Accepted, after trimming surrounding whitespace:
 *
 * - ISO 8601 with `Z` or an offset (`2026-12-11T11:30:39Z`, `2026-12-11T11:30:39-05:00`, with or
 *   without fractional seconds, which are truncated to milliseconds; also `2016-11-04 17:06:43 -0400`);
 * - a local date-time without offset (`2026-12-11T11:30:39` or `2026-12-11 11:30:39`), read on the
 *   wall clock of `zone` (a time in a DST gap moves forward by the gap, a repeated one takes its
 *   first occurrence, as {@link fromWallClock} documents);
 * - a date only (`2026-12-11`): the start of that local day in `zone`;
 * - a valid `Date`, returned as a copy (engine callers may already hold an instant).
 *
 * Numbers, words (`tomorrow`), impossible dates (`2026-13-01`, `2026-02-30`) and empty strings are
 * refused: epoch numbers are ambiguous between seconds and milliseconds.
 */
export function parseInstant(input: unknown, zone: string, label = 'Date'): Date {
  assertTimeZone(zone);
  const fail = () => invalid(`${label}: is not a valid date.`);
  if (input instanceof Date) {
    if (Number.isNaN(input.getTime())) throw fail();
    return new Date(input.getTime());
  }
  if (typeof input !== 'string') throw fail();
  const match = INSTANT_PATTERN.exec(input.trim());
  if (match === null) throw fail();
  const [, y, mo, d, h, mi, s, fraction, offset] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (!isValidCivilDate(year, month, day)) throw fail();
  if (h === undefined) return startOfCivilDay({ year, month, day }, zone);
  const hour = Number(h);
  const minute = Number(mi);
  const second = s === undefined ? 0 : Number(s);
  const millisecond = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  if (hour > 23 || minute > 59 || second > 59) throw fail();
  if (offset === undefined) return fromWallClock({ year, month, day, hour, minute, second, millisecond }, zone);
  const offsetMs = parseOffset(offset);
  if (offsetMs === undefined) throw fail();
  return instantFromMs(utcMs(year, month, day, hour, minute, second, millisecond) - offsetMs);
}

function parseOffset(text: string): number | undefined {
  if (text === 'Z' || text === 'z') return 0;
  const digits = text.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return (text.startsWith('-') ? -1 : 1) * (hours * 60 + minutes) * 60_000;
}
