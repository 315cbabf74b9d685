import type { AccountEntryRecord, ExportRecord } from 'billing-engine';
import type { SiteOwnedTable } from '../memory-state.js';
import { MemoryTable } from '../memory-table.js';

/** One stored row of an export, in the order the job wrote them. */
export interface ExportRowRecord {
  readonly id: number;
  readonly siteId: number;
  readonly exportId: number;
  readonly row: Readonly<Record<string, unknown>>;
}

/** Tables of prepayments, service credits and data exports in memory; `MemoryState` holds one. */
export class AccountTables {
  readonly accountEntries = new MemoryTable<AccountEntryRecord>();
  /** Entries by site and subscription: every read of an account is by subscription. */
  readonly entriesBySubscription = this.accountEntries.index((e) => `${e.siteId}:${e.subscriptionId}`);
  readonly exports = new MemoryTable<ExportRecord>();
  readonly exportRows = new MemoryTable<ExportRowRecord>();
  readonly rowsByExport = this.exportRows.index((r) => `${r.siteId}:${r.exportId}`);

  /** Tables whose rows belong to a site: removed when the site is deleted. */
  siteOwned(): SiteOwnedTable[] {
    return [...this.customerOwned()];
  }

  /** Tables of customer data: removed when the site's data is cleared (exports hold customer data too). */
  customerOwned(): SiteOwnedTable[] {
    return [this.accountEntries, this.exports, this.exportRows];
  }
}
