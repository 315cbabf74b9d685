import type { AccountsRepository, ExportsRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Prepayments and service credits over the memory tables (`state.accountTables`). */
export function memoryAccounts(state: MemoryState, journal: Journal): AccountsRepository {
  const t = state.accountTables;
  return {
    async insert(entry) {
      return t.accountEntries.insert(journal, { ...entry, id: t.accountEntries.nextId() });
    },
    async findById(siteId, id) {
      const entry = t.accountEntries.get(id);
      return entry?.siteId === siteId ? entry : undefined;
    },
    async listForSubscription(siteId, subscriptionId) {
      return t.accountEntries.filterIndexed(
        t.entriesBySubscription,
        `${siteId}:${subscriptionId}`,
        (e) => e.siteId === siteId && e.subscriptionId === subscriptionId,
      );
    },
    async list(siteId, filter, page) {
      const matching = t.accountEntries.filterIndexed(
        t.entriesBySubscription,
        `${siteId}:${filter.subscriptionId}`,
        (e) =>
          e.siteId === siteId &&
          e.subscriptionId === filter.subscriptionId &&
          (filter.entryTypes === undefined || filter.entryTypes.includes(e.entryType)) &&
          (filter.since === undefined || e.createdAt.getTime() >= filter.since.getTime()) &&
          (filter.until === undefined || e.createdAt.getTime() <= filter.until.getTime()),
      );
      const start = (page.page - 1) * page.perPage;
      return matching.slice(start, start + page.perPage);
    },
  };
}

/** Data exports over the memory tables (`state.accountTables`). */
export function memoryExports(state: MemoryState, journal: Journal): ExportsRepository {
  const t = state.accountTables;
  return {
    async insert(job) {
      return t.exports.insert(journal, {
        ...job,
        id: t.exports.nextId(),
        status: 'pending',
        rowCount: null,
        finishedAt: null,
      });
    },
    async findById(siteId, id) {
      const job = t.exports.get(id);
      return job?.siteId === siteId ? job : undefined;
    },
    async complete(siteId, id, rows, finishedAt) {
      const job = t.exports.get(id);
      if (job === undefined || job.siteId !== siteId || job.status !== 'pending') return undefined;
      for (const row of rows) t.exportRows.insert(journal, { id: t.exportRows.nextId(), siteId, exportId: id, row });
      return t.exports.replace(journal, { ...job, status: 'completed', rowCount: rows.length, finishedAt });
    },
    async rows(siteId, id, page) {
      const all = t.exportRows.filterIndexed(
        t.rowsByExport,
        `${siteId}:${id}`,
        (r) => r.siteId === siteId && r.exportId === id,
      );
      const start = (page.page - 1) * page.perPage;
      return all.slice(start, start + page.perPage).map((r) => ({ ...r.row }));
    },
  };
}
