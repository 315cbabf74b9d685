import type { SectionContext } from './harness.js';

/** Cases for the price-points repository. */
export function pricePointCases(_context: SectionContext): void {}
