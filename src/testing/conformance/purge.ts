import type { SectionContext } from './harness.js';

/** Cases for the purge repository. */
export function purgeCases(_context: SectionContext): void {}
