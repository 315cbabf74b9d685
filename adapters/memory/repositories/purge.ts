import type { PurgeRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Purging one subscription from the memory tables. */
export function memoryPurge(_state: MemoryState, _journal: Journal): PurgeRepository {
  return {};
}
