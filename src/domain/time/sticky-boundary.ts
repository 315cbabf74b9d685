import { addInterval } from './add-interval.js';
import type { Interval } from './interval.js';

/**
 * The hosted service's renewal rule, offered as a parity setting only: the next
 * period end is the previous end plus one interval, with the day clamped to the target month. The
 * day can therefore only shrink: Oct 31 renews Nov 30, Dec 30, Jan 30, Feb 28, Mar 28 and stays on
 * the 28th. The engine's default is {@link periodBoundary}, which does not drift. The local time of
 * day is kept across DST changes, as in {@link addInterval}; but because each step starts from the
 * previous end, a time moved by a DST gap (02:30 becomes 03:30) stays moved in later periods.
 */
export function stickyNextBoundary(previousEnd: Date, interval: Interval, zone: string): Date {
  return addInterval(previousEnd, interval, 1, zone);
}
