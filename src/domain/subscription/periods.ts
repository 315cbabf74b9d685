import type { ProductTerms, SiteSettings } from '../../ports/storage.js';
import { billingPeriod, type Interval, type SnapDay, snapBoundary, stickyNextBoundary } from '../time/index.js';

/** The billing interval of a product version. */
export function productInterval(terms: ProductTerms): Interval {
  return { count: terms.interval, unit: terms.intervalUnit };
}

/**
 * The period sequence number at which the subscription's anchor was set. Periods keep one
 * increasing sequence for the subscription's whole life (it names renewals and payment keys);
 * a billing-date change or a reactivation re-anchors at the next sequence number, so period `k`
 * starts at boundary `k - anchorIndex` of the anchor.
 */
export function anchorIndexOf(subscription: { data: Readonly<Record<string, unknown>> }): number {
  const value = subscription.data.anchorIndex;
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : 0;
}

/**
 * The period after the current one. Under the default anchor rule it is computed from the anchor
 * and the index (Jan 31 renews Feb 28, Mar 31, Apr 30); under the hosted service's sticky rule it
 * chains from the current end, so the day only ever shrinks.
 */
export function nextPeriod(
  current: {
    periodAnchorAt: Date;
    periodIndex: number;
    currentPeriodEndsAt: Date;
    data: Readonly<Record<string, unknown>>;
  },
  terms: ProductTerms,
  zone: string,
  rule: SiteSettings['periodRule'],
): { index: number; start: Date; end: Date } {
  const index = current.periodIndex + 1;
  const snapDay = snapDayOf(current);
  if (snapDay !== undefined) {
    // Calendar billing: every period ends at 12:00 local on the snap day of the next month.
    const start = current.currentPeriodEndsAt;
    return { index, start, end: snapBoundary(start, snapDay, zone) };
  }
  if (rule === 'sticky') {
    const start = current.currentPeriodEndsAt;
    return { index, start, end: stickyNextBoundary(start, productInterval(terms), zone) };
  }
  const period = billingPeriod(current.periodAnchorAt, index - anchorIndexOf(current), productInterval(terms), zone);
  return { index, start: period.start, end: period.end };
}

/** The calendar-billing snap day of a subscription, if it has one (kept in its data document). */
export function snapDayOf(subscription: { data: Readonly<Record<string, unknown>> }): SnapDay | undefined {
  const value = subscription.data.snapDay;
  return value === 'end' || (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 28)
    ? value
    : undefined;
}
