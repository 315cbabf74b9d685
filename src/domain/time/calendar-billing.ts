import { invalid } from '../../errors.js';
import { addCivilMonths, daysInMonth } from './civil-calendar.js';
import { assertInstant, MS_PER_DAY } from './instant.js';
import { assertTimeZone } from './time-zone.js';
import { fromWallClock, toWallClock } from './wall-clock.js';

/**
 * A calendar-billing day (`snap_day`): a day of the month from 1 to 28, which every
 * month has, or `'end'` for each month's last day.
 */
export type SnapDay = number | 'end';

/** The local hour at which calendar billing renews: 12:00 PM in the site's zone. */
export const SNAP_HOUR = 12;

/**
 * Throws `Snap day: must be a number between 1 and 28 or 'end'.` (attribute `snap_day`) unless
 * `snapDay` is an integer 1-28 or `'end'`. Days 29-31 are refused because not every month has them.
 */
export function assertSnapDay(snapDay: unknown): asserts snapDay is SnapDay {
  const ok =
    snapDay === 'end' || (typeof snapDay === 'number' && Number.isInteger(snapDay) && snapDay >= 1 && snapDay <= 28);
  if (!ok) throw invalid("Snap day: must be a number between 1 and 28 or 'end'.", 'snap_day');
}

/**
 * The first instant strictly after `after` at which a clock in `zone` shows 12:00 on the snap day
 * (the given day, or the month's last day for `'end'`): the next calendar-billing renewal. An
 * `after` exactly at a snap 12:00 gives the following month's, so a renewal never lands on itself.
 */
export function snapBoundary(after: Date, snapDay: SnapDay, zone: string): Date {
  assertInstant(after);
  assertSnapDay(snapDay);
  assertTimeZone(zone);
  const local = toWallClock(after, zone);
  const thisMonth = snapInMonth(local.year, local.month, snapDay, zone);
  if (thisMonth.getTime() > after.getTime()) return thisMonth;
  const next = addCivilMonths({ year: local.year, month: local.month, day: 1 }, 1);
  return snapInMonth(next.year, next.month, snapDay, zone);
}

/**
 * The end of the first period of a calendar-billed subscription signed up at `signupAt`.
 * Normally it is the next snap 12:00 and the first charge is prorated; but when
 * that snap is at most 24 hours after signup (24 elapsed hours, whatever DST does), the customer
 * pays a full period and it ends on the following month's snap day instead. With snap day 15:
 * signup Jun 2 15:00 ends Jun 15 12:00, Jun 14 15:00 ends Jul 15 12:00, Jun 15 12:01 ends Jul 15 12:00.
 */
export function firstSnapPeriodEnd(signupAt: Date, snapDay: SnapDay, zone: string): Date {
  const next = snapBoundary(signupAt, snapDay, zone);
  return next.getTime() - signupAt.getTime() <= MS_PER_DAY ? snapBoundary(next, snapDay, zone) : next;
}

function snapInMonth(year: number, month: number, snapDay: SnapDay, zone: string): Date {
  const day = snapDay === 'end' ? daysInMonth(year, month) : snapDay;
  return fromWallClock({ year, month, day, hour: SNAP_HOUR, minute: 0, second: 0, millisecond: 0 }, zone);
}
