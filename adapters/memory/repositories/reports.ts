import type { ReportsRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Site-wide report reads over the memory tables. */
export function memoryReports(_state: MemoryState, _journal: Journal): ReportsRepository {
  return {};
}
