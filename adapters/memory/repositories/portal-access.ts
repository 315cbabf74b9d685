/** Customers' billing-portal access in memory. */
import type { PortalAccessRecord, PortalAccessRepository } from 'billing-engine';
import type { MemoryState, SiteOwnedTable } from '../memory-state.js';
import { type Journal, MemoryTable } from '../memory-table.js';

/** The table of portal access rows; `MemoryState` holds one. */
export class PortalAccessTables {
  readonly access = new MemoryTable<PortalAccessRecord>();
  /** Rows by site and customer (unique): every read is by customer. */
  readonly byCustomer = this.access.index((r) => `${r.siteId}:${r.customerId}`);

  /** Tables of customer data: removed when the site's data is cleared (and with the site). */
  customerOwned(): SiteOwnedTable[] {
    return [this.access];
  }
}

/** Portal access over `state.portalAccessTables`. */
export function memoryPortalAccess(state: MemoryState, journal: Journal): PortalAccessRepository {
  const tables = state.portalAccessTables;
  const find = (siteId: number, customerId: number) =>
    tables.access.findIndexed(
      tables.byCustomer,
      `${siteId}:${customerId}`,
      (r) => r.siteId === siteId && r.customerId === customerId,
    );
  return {
    async find(siteId, customerId) {
      // A row outlives a deleted customer here (SQL drops it with the customer): it is never read.
      if (state.customers.peek(customerId)?.siteId !== siteId) return undefined;
      return find(siteId, customerId);
    },
    async save(record) {
      const existing = find(record.siteId, record.customerId);
      if (existing === undefined) return tables.access.insert(journal, { ...record, id: tables.access.nextId() });
      return tables.access.replace(journal, { ...record, id: existing.id, createdAt: existing.createdAt })!;
    },
  };
}
