/**
 * The time core: IANA zone checks, wall-clock conversion, billing periods (anchor rule, sticky
 * parity rule, calendar billing), local-day helpers and the wire formats for instants. Instants are
 * UTC `Date`s; calendar arithmetic happens on the site zone's wall clock. Nothing here reads the
 * system clock or does I/O.
 */
export { addInterval } from './add-interval.js';
export { type BillingPeriod, billingPeriod, periodBoundary, periodIndexAt } from './billing-period.js';
export {
  assertSnapDay,
  firstSnapPeriodEnd,
  SNAP_HOUR,
  type SnapDay,
  snapBoundary,
} from './calendar-billing.js';
export { type CivilDate, daysInMonth, isLeapYear } from './civil-calendar.js';
export { millisecondsBetween, secondsBetween } from './elapsed.js';
export { formatInstant, formatWebhookTimestamp } from './format-instant.js';
export { assertInstant, MS_PER_DAY } from './instant.js';
export { assertInterval, type Interval, type IntervalUnit } from './interval.js';
export { endOfLocalDay, localDateString, parseLocalDate, startOfLocalDay } from './local-day.js';
export { parseInstant } from './parse-instant.js';
export { stickyNextBoundary } from './sticky-boundary.js';
export { assertTimeZone, isValidTimeZone } from './time-zone.js';
export { fromWallClock, toWallClock, type WallClock, zoneOffsetAt } from './wall-clock.js';
