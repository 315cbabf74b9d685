import { MS_PER_DAY } from './instant.js';

/**
 * A date on the proleptic Gregorian calendar with no time zone: what a wall calendar shows.
 * `month` is 1-12 and `day` 1-31, the way people write dates (unlike `Date#getMonth`).
 */
export interface CivilDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

/**
 * Epoch milliseconds of the given calendar fields read as UTC. Unlike `Date.UTC` it keeps years
 * 0-99 as written (Date.UTC maps them to 1900-1999), so arithmetic is exact for every year.
 */
export function utcMs(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  millisecond = 0,
): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millisecond);
  return date.getTime();
}

/** True for Gregorian leap years (divisible by 4, except centuries not divisible by 400). */
export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const MONTH_LENGTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/**
 * Number of days in `month` (1-12) of `year`: 28-31. Month clamping (Jan 31 renews on Feb 28 or
 * 29) and the calendar-billing `end` snap day are both defined by it.
 */
export function daysInMonth(year: number, month: number): number {
  if (month === 2 && isLeapYear(year)) return 29;
  return MONTH_LENGTHS[month - 1] ?? Number.NaN;
}

/** True when the three numbers are integers naming a day that exists (2024-02-29 yes, 2023-02-30 no). */
export function isValidCivilDate(year: number, month: number, day: number): boolean {
  return (
    Number.isInteger(year) &&
    Number.isInteger(month) &&
    Number.isInteger(day) &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month)
  );
}

/**
 * Days from 1970-01-01 to `date` (negative before it). The difference of two day numbers is the
 * number of calendar days between them, whatever the zone's DST does to their length in hours.
 */
export function civilDayNumber(date: CivilDate): number {
  return Math.round(utcMs(date.year, date.month, date.day) / MS_PER_DAY);
}

/** The calendar date `days` days after `date` (before it when negative). */
export function addCivilDays(date: CivilDate, days: number): CivilDate {
  const shifted = new Date(utcMs(date.year, date.month, date.day + days));
  return { year: shifted.getUTCFullYear(), month: shifted.getUTCMonth() + 1, day: shifted.getUTCDate() };
}

/**
 * The calendar date `months` months after `date`, with the day clamped to the target month's
 * length: Jan 31 + 1 month is Feb 28 (Feb 29 in a leap year), + 2 months is Mar 31. Clamping only
 * this one step is what makes anchor-based periods drift-free.
 */
export function addCivilMonths(date: CivilDate, months: number): CivilDate {
  const total = date.year * 12 + (date.month - 1) + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12 + 1;
  return { year, month, day: Math.min(date.day, daysInMonth(year, month)) };
}

/** `YYYY-MM-DD` for a calendar date (years outside 0-9999 keep their sign and extra digits). */
export function formatCivilDate(date: CivilDate): string {
  const year =
    date.year >= 0 && date.year <= 9999
      ? String(date.year).padStart(4, '0')
      : (date.year < 0 ? '-' : '+') + String(Math.abs(date.year)).padStart(6, '0');
  return `${year}-${pad2(date.month)}-${pad2(date.day)}`;
}

/** Two-digit zero padding for calendar and clock fields. */
export function pad2(value: number): string {
  return String(value).padStart(2, '0');
}
