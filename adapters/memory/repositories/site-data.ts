import type { SiteDataRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Whole-site data operations over the memory tables. */
export function memorySiteData(state: MemoryState, journal: Journal): SiteDataRepository {
  return {
    async counts(siteId) {
      return {
        customers: state.customers.count((r) => r.siteId === siteId),
        subscriptions: state.subscriptions.count((r) => r.siteId === siteId),
        transactions: state.transactions.count((r) => r.siteId === siteId),
      };
    },
    async clear(siteId, _scope) {
      // Both scopes remove the same tables today: every customer-owned record. `all` will also
      // cover records that are not customer-owned (e.g. standalone invoices) when they exist. Both
      // remove every subscription, so both remove the custom price points below.
      for (const line of state.transactions.filter((t) => t.siteId === siteId)) {
        const previous = state.lastLine.get(line.subscriptionId);
        if (previous !== undefined) {
          state.lastLine.delete(line.subscriptionId);
          journal.push(() => state.lastLine.set(line.subscriptionId, previous));
        }
      }
      for (const table of state.customerTables()) table.deleteWhere(journal, (r) => r.siteId === siteId);
      // Every subscription is gone, so every custom price point is too (each belongs to one
      // subscription, as a purge removes them), with the product versions holding their terms.
      const pricePoints = state.pricePointTables.productPricePoints;
      const customIds = new Set(pricePoints.filter((p) => p.siteId === siteId && p.type === 'custom').map((p) => p.id));
      if (customIds.size > 0) {
        state.productVersions.deleteWhere(
          journal,
          (v) => v.siteId === siteId && typeof v.pricePointId === 'number' && customIds.has(v.pricePointId),
        );
        pricePoints.deleteWhere(journal, (p) => customIds.has(p.id));
      }
      state.outbox.deleteWhere(journal, (r) => r.siteId === siteId);
      // All of it: prepaid replenishment checks and mail jobs (found by key by a purge) included.
      state.dueWork.deleteWhere(journal, (r) => r.siteId === siteId);
    },
  };
}
