import type { OutboxRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** The outbox over the memory tables. */
export function memoryOutbox(state: MemoryState, journal: Journal): OutboxRepository {
  return {
    async append(events) {
      return events.map((event) => state.outbox.insert(journal, { ...event, id: state.outbox.nextId() }));
    },
    async listAfter(siteId, afterId, limit) {
      const out = [];
      for (const row of state.outbox.scan()) {
        if (row.siteId === siteId && row.id > afterId) out.push(structuredClone(row));
        if (out.length >= limit) break;
      }
      return out;
    },
    async findById(siteId, id) {
      const row = state.outbox.get(id);
      return row?.siteId === siteId ? row : undefined;
    },
  };
}
