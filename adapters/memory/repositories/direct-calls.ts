import { BillingError, type DirectCallsRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Direct-post call records over the memory tables. */
export function memoryDirectCalls(state: MemoryState, journal: Journal): DirectCallsRepository {
  return {
    async insert(call) {
      if (state.directCalls.count((r) => r.call.id === call.id) > 0)
        throw new BillingError('conflict', 'Call id is already taken.');
      const row = state.directCalls.insert(journal, { id: state.directCalls.nextId(), siteId: call.siteId, call });
      return row.call;
    },
    async findById(siteId, id) {
      return state.directCalls.find((r) => r.siteId === siteId && r.call.id === id)?.call;
    },
  };
}
