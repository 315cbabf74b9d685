import { formatCivilDate, pad2 } from './civil-calendar.js';
import { assertInstant, MS_PER_DAY } from './instant.js';
import { assertTimeZone } from './time-zone.js';
import { wallClockFromMs, zoneOffsetAt } from './wall-clock.js';

/**
 * `instant` as the service writes timestamps in API responses: ISO 8601 local time in `zone` with
 * the zone's offset and no fraction, e.g. `2026-01-01T00:00:00-05:00`; UTC is written `+00:00`,
 * never `Z`. Milliseconds are dropped (truncated), so parsing the result gives the instant rounded
 * down to its second. Built from the exact zone offset rather than with `formatInTimeZone`, whose
 * clock fields go through the process's zone and come out an hour off for local times that do not
 * exist there.
 */
export function formatInstant(instant: Date, zone: string): string {
  const { local, offset } = localParts(instant, zone);
  return `${local.date}T${local.time}${formatOffset(offset, ':')}`;
}

/**
 * `instant` in the format of webhook payload timestamps, local time in `zone`
 * with a colon-free offset: `2016-11-04 17:06:43 -0400`. The service writes webhooks in US Eastern
 * time; which zone to pass is the caller's (compatibility) choice.
 */
export function formatWebhookTimestamp(instant: Date, zone: string): string {
  const { local, offset } = localParts(instant, zone);
  return `${local.date} ${local.time} ${formatOffset(offset, '')}`;
}

function localParts(instant: Date, zone: string): { local: { date: string; time: string }; offset: number } {
  assertInstant(instant);
  assertTimeZone(zone);
  const ms = instant.getTime();
  const offset = zoneOffsetAt(ms, zone);
  const localMs = ms + offset;
  if (Number.isFinite(localMs)) return { local: localFields(localMs), offset };
  const wall = wallClockFromMs(localMs);
  return {
    local: { date: formatCivilDate(wall), time: `${pad2(wall.hour)}:${pad2(wall.minute)}:${pad2(wall.second)}` },
    offset,
  };
}

// '00' to '99': every two-digit field of a timestamp is one array read.
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));

/**
 * The date and time of day of a local timestamp (epoch milliseconds read as UTC), written as
 * formatCivilDate and `HH:mm:ss` write them, by integer arithmetic: days since the epoch to a
 * proleptic Gregorian date (H. Hinnant's `civil_from_days`, exact for every day a Date can hold),
 * with no Date object and no field getters. Every response writes a dozen timestamps.
 */
function localFields(localMs: number): { date: string; time: string } {
  const days = Math.floor(localMs / MS_PER_DAY);
  const secondOfDay = Math.floor((localMs - days * MS_PER_DAY) / 1000);
  const hour = Math.floor(secondOfDay / 3600);
  const minute = Math.floor((secondOfDay - hour * 3600) / 60);
  const second = secondOfDay - hour * 3600 - minute * 60;
  // civil_from_days: eras of 400 years (146,097 days) starting on March 1st, year 0.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const yearText =
    year >= 0 && year <= 9999
      ? String(year).padStart(4, '0')
      : (year < 0 ? '-' : '+') + String(Math.abs(year)).padStart(6, '0');
  return {
    date: `${yearText}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}`,
    time: `${TWO_DIGITS[hour]}:${TWO_DIGITS[minute]}:${TWO_DIGITS[second]}`,
  };
}

// Offsets are whole minutes for every zone in modern use; the seconds of historical local mean
// time offsets (before ~1900) cannot be written in ISO 8601 and are dropped.
function formatOffset(offsetMs: number, separator: string): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const minutes = Math.trunc(Math.abs(offsetMs) / 60_000);
  return `${sign}${pad2(Math.floor(minutes / 60))}${separator}${pad2(minutes % 60)}`;
}
