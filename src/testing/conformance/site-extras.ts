import type { SectionContext } from './harness.js';

/** Cases for the reason-codes and coupon-subcodes repositories. */
export function siteExtraCases(_context: SectionContext): void {}
