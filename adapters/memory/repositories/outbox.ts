import type { OutboxEventRecord, OutboxFilter, OutboxRepository } from 'billing-engine';
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
    async search(siteId, query) {
      const rows = [...state.outbox.scan()].filter((row) => row.siteId === siteId && matches(row, query));
      rows.sort((a, b) => (query.direction === 'asc' ? a.id - b.id : b.id - a.id));
      const start = Math.max(0, query.offset);
      return rows.slice(start, start + Math.max(0, query.limit)).map((row) => structuredClone(row));
    },
    async count(siteId, filter) {
      let count = 0;
      for (const row of state.outbox.scan()) if (row.siteId === siteId && matches(row, filter)) count += 1;
      return count;
    },
  };
}

function matches(row: OutboxEventRecord, filter: OutboxFilter): boolean {
  if (filter.sinceId !== undefined && row.id < filter.sinceId) return false;
  if (filter.maxId !== undefined && row.id > filter.maxId) return false;
  if (filter.keys !== undefined && !filter.keys.includes(row.key)) return false;
  if (filter.subject !== undefined && (row.subjectType !== filter.subject.type || row.subjectId !== filter.subject.id))
    return false;
  if (filter.occurredFrom !== undefined && row.occurredAt.getTime() < filter.occurredFrom.getTime()) return false;
  if (filter.occurredUntil !== undefined && row.occurredAt.getTime() > filter.occurredUntil.getTime()) return false;
  return true;
}
