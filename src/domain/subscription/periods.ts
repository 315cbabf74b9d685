import type { ProductTerms, SiteSettings } from '../../ports/storage.js';
import { billingPeriod, type Interval, stickyNextBoundary } from '../time/index.js';

/** The billing interval of a product version. */
export function productInterval(terms: ProductTerms): Interval {
  return { count: terms.interval, unit: terms.intervalUnit };
}

/**
 * The period after the current one. Under the default anchor rule it is computed from the anchor
 * and the index (Jan 31 renews Feb 28, Mar 31, Apr 30); under the hosted service's sticky rule it
 * chains from the current end, so the day only ever shrinks.
 */
export function nextPeriod(
  current: { periodAnchorAt: Date; periodIndex: number; currentPeriodEndsAt: Date },
  terms: ProductTerms,
  zone: string,
  rule: SiteSettings['periodRule'],
): { index: number; start: Date; end: Date } {
  const index = current.periodIndex + 1;
  if (rule === 'sticky') {
    const start = current.currentPeriodEndsAt;
    return { index, start, end: stickyNextBoundary(start, productInterval(terms), zone) };
  }
  const period = billingPeriod(current.periodAnchorAt, index, productInterval(terms), zone);
  return { index, start: period.start, end: period.end };
}
