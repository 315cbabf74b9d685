import type { SectionContext } from './harness.js';

/** Cases for the reports repository. */
export function reportCases(_context: SectionContext): void {}
