import { fromZonedTime } from 'date-fns-tz';
import { invalid } from '../../errors.js';
import { type CivilDate, formatCivilDate, isValidCivilDate, pad2, utcMs } from './civil-calendar.js';
import { assertInstant, instantFromMs, MAX_INSTANT_MS, MS_PER_DAY } from './instant.js';
import { assertTimeZone } from './time-zone.js';

/**
 * A local date and time of day in some zone, as a clock on the wall shows it: calendar fields plus
 * hour (0-23), minute, second and millisecond. It names no instant by itself; with a zone it names
 * one instant, none (a DST gap) or two (a DST overlap), see {@link fromWallClock}.
 */
export interface WallClock extends CivilDate {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly millisecond: number;
}

// One formatter per zone: building an Intl.DateTimeFormat is far slower than using one. Capped
// like the zone-name cache, since zone names can come from client input.
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 1000;

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size < MAX_FORMATTERS) formatters.set(zone, formatter);
  }
  return formatter;
}

// Zones that are UTC under another name (`Etc/UTC`, `GMT`, `Zulu`...): ICU resolves them to `UTC`,
// whose offset is zero at every instant, so they never need a lookup. Capped like the formatters.
const utcAliases = new Map<string, boolean>();

function isUtc(zone: string): boolean {
  let utc = utcAliases.get(zone);
  if (utc === undefined) {
    utc = formatterFor(zone).resolvedOptions().timeZone === 'UTC';
    if (utcAliases.size < MAX_FORMATTERS) utcAliases.set(zone, utc);
  }
  return utc;
}

// Offsets of whole hours, per zone: `Intl` formatting costs microseconds and the same instants
// are formatted again and again (every timestamp of every response, every period boundary). An
// hour is remembered only when its first and last millisecond have the same offset, so an hour
// holding a transition is always read from `Intl`; this relies, like `fromWallClock`, on a zone's
// transitions being months apart (two within one hour that cancel out do not exist). The cache is
// bounded: past MAX_REMEMBERED_HOURS entries it starts again empty.
const HOUR_MS = 3_600_000;
const MAX_REMEMBERED_HOURS = 100_000;
const hourOffsets = new Map<string, Map<number, number>>();
let rememberedHours = 0;

/**
 * The zone's UTC offset at an instant, in milliseconds to add to UTC to get local time (New York in
 * winter: -18,000,000). It is read from `Intl` directly, like date-fns-tz does internally, because
 * date-fns-tz's own `getTimezoneOffset` treats its argument as a wall time and is off by the DST
 * shift near transitions, and `toZonedTime` builds its result in the process's zone, so a local
 * time that does not exist in the process's zone comes back an hour off. UTC and its aliases are
 * zero without a lookup, and offsets are remembered per hour of the zone (see above).
 */
export function zoneOffsetAt(instantMs: number, zone: string): number {
  if (isUtc(zone)) return Number.isFinite(instantMs) ? 0 : intlOffsetAt(instantMs, zone);
  const hour = Math.floor(instantMs / HOUR_MS);
  let hours = hourOffsets.get(zone);
  const remembered = hours?.get(hour);
  if (remembered !== undefined) return remembered;
  const start = hour * HOUR_MS;
  // Not a usable instant, or an hour that runs past the end of the Date range: no hour to remember.
  if (!Number.isFinite(start) || start + HOUR_MS - 1 > MAX_INSTANT_MS) return intlOffsetAt(instantMs, zone);
  const offset = intlOffsetAt(start, zone);
  if (intlOffsetAt(start + HOUR_MS - 1, zone) !== offset) return intlOffsetAt(instantMs, zone);
  if (rememberedHours >= MAX_REMEMBERED_HOURS) {
    hourOffsets.clear();
    rememberedHours = 0;
    hours = undefined;
  }
  if (hours === undefined) {
    hours = new Map();
    hourOffsets.set(zone, hours);
  }
  hours.set(hour, offset);
  rememberedHours += 1;
  return offset;
}

/** The offset as `Intl` gives it: the zone's wall clock at the instant, read as UTC, minus the instant. */
function intlOffsetAt(instantMs: number, zone: string): number {
  const fields: Record<string, string> = {};
  for (const part of formatterFor(zone).formatToParts(instantMs)) fields[part.type] = part.value;
  const yearOfEra = Number(fields.year);
  const year = fields.era === 'BC' || fields.era === 'B' ? 1 - yearOfEra : yearOfEra;
  const millisecond = ((instantMs % 1000) + 1000) % 1000;
  const wall = utcMs(
    year,
    Number(fields.month),
    Number(fields.day),
    Number(fields.hour),
    Number(fields.minute),
    Number(fields.second),
    millisecond,
  );
  return wall - instantMs;
}

/** The wall clock's fields read as if they were UTC, in epoch milliseconds: the "local timestamp". */
export function wallClockMs(wall: WallClock): number {
  return utcMs(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second, wall.millisecond);
}

/** The wall clock whose fields, read as UTC, are the given epoch milliseconds (inverse of {@link wallClockMs}). */
export function wallClockFromMs(ms: number): WallClock {
  const date = new Date(ms);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
    millisecond: date.getUTCMilliseconds(),
  };
}

/**
 * What a clock in `zone` shows at `instant`. Exact to the millisecond and independent of the
 * process's own time zone (the engine may run under any `TZ`).
 */
export function toWallClock(instant: Date, zone: string): WallClock {
  assertInstant(instant);
  assertTimeZone(zone);
  const ms = instant.getTime();
  return wallClockFromMs(ms + zoneOffsetAt(ms, zone));
}

/**
 * The instant at which a clock in `zone` shows `wall`. The wall time is first read with the offset
 * in force a day earlier (right unless a transition is near); when that is not an occurrence,
 * date-fns-tz's `fromZonedTime` converts it. The two DST edge cases are pinned so that they never
 * depend on the process's time zone:
 *
 * - Overlap (fall back, the local time happens twice, e.g. 01:30 on 2024-11-03 in New York): the
 *   first occurrence, still on the old offset (01:30 EDT = 05:30Z). `fromZonedTime` alone picks the
 *   first or the second occurrence depending on the process's `TZ`.
 * - Gap (spring forward, the local time never happens, e.g. 02:30 on 2024-03-10 in New York): the
 *   wall time read with the offset in force before the jump, which lands the length of the gap
 *   later on the new offset (02:30 becomes 03:30 EDT = 07:30Z). `fromZonedTime` alone moves it the
 *   other way (01:30 EST = 06:30Z); that would put a midnight in a gap on the previous day (São
 *   Paulo's 2018-11-04 00:30 would become 2018-11-03 23:30), so a DST change could move a renewal
 *   to another date and a day's start before the day. Moving forward keeps the local date.
 *
 * Both rules are "use the offset in force before the transition", the rule of RFC 5545 and of
 * Temporal's `compatible` disambiguation.
 */
export function fromWallClock(wall: WallClock, zone: string): Date {
  assertTimeZone(zone);
  assertWallClock(wall);
  const target = wallClockMs(wall);
  // The probes below look a day either side; beyond the Date range Intl would throw a RangeError.
  if (!Number.isFinite(target) || Math.abs(target) > MAX_INSTANT_MS - 2 * MS_PER_DAY)
    throw invalid('Date: is out of range.');
  const isOccurrence = (candidate: number): boolean =>
    Number.isFinite(candidate) && candidate + zoneOffsetAt(candidate, zone) === target;
  // The offset a day earlier is the one in force before any transition that could touch this wall
  // time (offsets stay within ±14 h and a zone's transitions are months apart).
  const early = target - zoneOffsetAt(target - MS_PER_DAY, zone);
  // Almost always the answer (no transition nearby); in an overlap it is the first occurrence.
  if (isOccurrence(early)) return instantFromMs(early);
  // Just after a transition the old offset no longer applies; date-fns-tz finds the new one.
  const converted = viaDateFnsTz(wall, zone);
  if (isOccurrence(converted)) return instantFromMs(converted);
  // No instant shows this wall time: a DST gap. Keep the old offset, i.e. move forward by the gap.
  return instantFromMs(early);
}

function viaDateFnsTz(wall: WallClock, zone: string): number {
  // date-fns-tz parses only four-digit years; beyond them the offset a day later serves the same purpose.
  if (wall.year < 0 || wall.year > 9999) {
    const target = wallClockMs(wall);
    return target - zoneOffsetAt(target + MS_PER_DAY, zone);
  }
  const time = `${pad2(wall.hour)}:${pad2(wall.minute)}:${pad2(wall.second)}.${String(wall.millisecond).padStart(3, '0')}`;
  // A string, not a Date: a Date would hold the fields as process-local time, which may not exist there.
  return fromZonedTime(`${formatCivilDate(wall)}T${time}`, zone).getTime();
}

function assertWallClock(wall: WallClock): void {
  const inRange = (value: number, max: number): boolean => Number.isInteger(value) && value >= 0 && value <= max;
  if (
    !isValidCivilDate(wall.year, wall.month, wall.day) ||
    !inRange(wall.hour, 23) ||
    !inRange(wall.minute, 59) ||
    !inRange(wall.second, 59) ||
    !inRange(wall.millisecond, 999)
  ) {
    throw invalid('Date: is not a valid date.');
  }
}
