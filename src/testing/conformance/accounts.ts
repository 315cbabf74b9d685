import type { SectionContext } from './harness.js';

/** Cases for the accounts and exports repositories. */
export function accountCases(_context: SectionContext): void {}
