import { BillingError, type ProformaInvoiceRecord, type ProformaInvoicesRepository } from 'billing-engine';
import type { MemoryState, SiteOwnedTable } from '../memory-state.js';
import { type Journal, MemoryTable } from '../memory-table.js';

/** An index key, as `keyOf` of memory-state spells them (kept local: memory-state imports this file). */
function keyOf(...parts: readonly (string | number)[]): string {
  return parts.join('\u0000');
}

/** The numbering series of proforma invoices in the site's document counters (kept when data is cleared). */
const SERIES = 'proforma';

/** The proforma invoice table in memory; `MemoryState` holds one. */
export class ProformaTables {
  readonly proformaInvoices = new MemoryTable<ProformaInvoiceRecord>();
  readonly byUid = this.proformaInvoices.index((p) => keyOf(p.siteId, p.uid));
  readonly bySubscription = this.proformaInvoices.index((p) => keyOf(p.siteId, p.subscriptionId ?? 0));

  /** Proforma invoices are customer data: cleared with it, and with the site. */
  customerOwned(): SiteOwnedTable[] {
    return [this.proformaInvoices];
  }
}

/** Proforma invoices over the memory tables (`state.proformaTables`). */
export function memoryProformaInvoices(state: MemoryState, journal: Journal): ProformaInvoicesRepository {
  const t = state.proformaTables;
  return {
    async nextNumber(siteId) {
      const key = keyOf(siteId, SERIES);
      const row = state.documentSequences.findIndexed(state.documentSequencesByKey, key, () => true);
      if (row === undefined) {
        state.documentSequences.insert(journal, {
          id: state.documentSequences.nextId(),
          siteId,
          series: SERIES,
          last: 1,
        });
        return 1;
      }
      state.documentSequences.replace(journal, { ...row, last: row.last + 1 });
      return row.last + 1;
    },
    async insert(proforma) {
      if (t.proformaInvoices.findIndexed(t.byUid, keyOf(proforma.siteId, proforma.uid), () => true))
        throw new BillingError('conflict', 'Proforma invoice uid is already taken.');
      if (t.proformaInvoices.find((p) => p.siteId === proforma.siteId && p.number === proforma.number))
        throw new BillingError('conflict', 'Proforma invoice number is already taken.');
      return t.proformaInvoices.insert(journal, { ...proforma, id: t.proformaInvoices.nextId() });
    },
    async findByUid(siteId, uid) {
      return t.proformaInvoices.findIndexed(t.byUid, keyOf(siteId, uid), (p) => p.siteId === siteId && p.uid === uid);
    },
    async void(siteId, id, voidedAt, reason) {
      const found = t.proformaInvoices.get(id);
      if (found === undefined || found.siteId !== siteId || found.status !== 'draft') return undefined;
      return t.proformaInvoices.replace(journal, { ...found, status: 'voided', voidedAt, voidReason: reason });
    },
    async list(siteId, filter) {
      const matches = (p: ProformaInvoiceRecord) =>
        p.siteId === siteId &&
        (filter.subscriptionId === undefined || p.subscriptionId === filter.subscriptionId) &&
        (filter.status === undefined || p.status === filter.status) &&
        (filter.deliveryFrom === undefined || p.deliveryDate >= filter.deliveryFrom) &&
        (filter.deliveryTo === undefined || p.deliveryDate <= filter.deliveryTo);
      const all =
        filter.subscriptionId === undefined
          ? t.proformaInvoices.filter(matches)
          : t.proformaInvoices.filterIndexed(t.bySubscription, keyOf(siteId, filter.subscriptionId), matches);
      all.sort((a, b) => (filter.direction === 'asc' ? a.number - b.number : b.number - a.number));
      return { proformaInvoices: all.slice(filter.offset, filter.offset + filter.limit), total: all.length };
    },
  };
}
