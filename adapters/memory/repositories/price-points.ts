import type { PricePointsRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Price points over the memory tables (`state.pricePointTables`). */
export function memoryPricePoints(_state: MemoryState, _journal: Journal): PricePointsRepository {
  return {};
}
