import type { Storage, StorageTransaction } from 'billing-engine';
import { MemoryState } from './memory-state.js';
import { Journal, Mutex } from './memory-table.js';
import { memoryAccounts, memoryExports } from './repositories/accounts.js';
import { memoryCatalog } from './repositories/catalog.js';
import { memoryComponents } from './repositories/components.js';
import { memoryCoupons } from './repositories/coupons.js';
import { memoryCredentials } from './repositories/credentials.js';
import { memoryCustomers } from './repositories/customers.js';
import { memoryDirectCalls } from './repositories/direct-calls.js';
import { memoryDueWork } from './repositories/due-work.js';
import { memoryIdempotency } from './repositories/idempotency.js';
import { memoryInvoices } from './repositories/invoices.js';
import { memoryLedger } from './repositories/ledger.js';
import { memoryMetafields } from './repositories/metafields.js';
import { memoryMrrMovements } from './repositories/mrr-movements.js';
import { memoryNotes } from './repositories/notes.js';
import { memoryOffers } from './repositories/offers.js';
import { memoryOutbox } from './repositories/outbox.js';
import { memoryPayments } from './repositories/payments.js';
import { memoryPortalAccess } from './repositories/portal-access.js';
import { memoryPricePoints } from './repositories/price-points.js';
import { memoryProformaInvoices } from './repositories/proforma-invoices.js';
import { memoryPurge } from './repositories/purge.js';
import { memoryReports } from './repositories/reports.js';
import { memorySiteData } from './repositories/site-data.js';
import { memoryCouponSubcodes, memoryReasonCodes } from './repositories/site-extras.js';
import { memorySites } from './repositories/sites.js';
import { memorySubscriptionComponents } from './repositories/subscription-components.js';
import { memorySubscriptions } from './repositories/subscriptions.js';
import { memoryWebhooks } from './repositories/webhooks.js';

/**
 * The repositories of one transaction, each made on first use: a request touches two or three of
 * the eighteen, and making all of them for every transaction (each a dozen closures) was a
 * measurable part of a read. Plain fields rather than `#private` ones, so that the preview's
 * Proxy over a transaction can read them through its receiver.
 */
class MemoryTransaction implements StorageTransaction {
  private readonly made: { -readonly [K in keyof StorageTransaction]?: StorageTransaction[K] } = {};

  constructor(
    private readonly state: MemoryState,
    private readonly journal: Journal,
  ) {}

  private repository<K extends keyof StorageTransaction>(
    name: K,
    make: (state: MemoryState, journal: Journal) => StorageTransaction[K],
  ): StorageTransaction[K] {
    const made = this.made[name];
    if (made !== undefined) return made as StorageTransaction[K];
    const repository = make(this.state, this.journal);
    this.made[name] = repository;
    return repository;
  }

  get sites() {
    return this.repository('sites', memorySites);
  }
  get siteData() {
    return this.repository('siteData', memorySiteData);
  }
  get credentials() {
    return this.repository('credentials', memoryCredentials);
  }
  get idempotency() {
    return this.repository('idempotency', memoryIdempotency);
  }
  get dueWork() {
    return this.repository('dueWork', memoryDueWork);
  }
  get outbox() {
    return this.repository('outbox', memoryOutbox);
  }
  get catalog() {
    return this.repository('catalog', memoryCatalog);
  }
  get customers() {
    return this.repository('customers', memoryCustomers);
  }
  get subscriptions() {
    return this.repository('subscriptions', memorySubscriptions);
  }
  get ledger() {
    return this.repository('ledger', memoryLedger);
  }
  get payments() {
    return this.repository('payments', memoryPayments);
  }
  get components() {
    return this.repository('components', memoryComponents);
  }
  get coupons() {
    return this.repository('coupons', memoryCoupons);
  }
  get metafields() {
    return this.repository('metafields', memoryMetafields);
  }
  get notes() {
    return this.repository('notes', memoryNotes);
  }
  get subscriptionComponents() {
    return this.repository('subscriptionComponents', memorySubscriptionComponents);
  }
  get webhooks() {
    return this.repository('webhooks', memoryWebhooks);
  }
  get directCalls() {
    return this.repository('directCalls', memoryDirectCalls);
  }
  get invoices() {
    return this.repository('invoices', memoryInvoices);
  }
  get pricePoints() {
    return this.repository('pricePoints', memoryPricePoints);
  }
  get reasonCodes() {
    return this.repository('reasonCodes', memoryReasonCodes);
  }
  get couponSubcodes() {
    return this.repository('couponSubcodes', memoryCouponSubcodes);
  }
  get accounts() {
    return this.repository('accounts', memoryAccounts);
  }
  get exports() {
    return this.repository('exports', memoryExports);
  }
  get proformaInvoices() {
    return this.repository('proformaInvoices', memoryProformaInvoices);
  }
  get reports() {
    return this.repository('reports', memoryReports);
  }
  get portalAccess() {
    return this.repository('portalAccess', memoryPortalAccess);
  }
  get offers() {
    return this.repository('offers', memoryOffers);
  }
  get mrrMovements() {
    return this.repository('mrrMovements', memoryMrrMovements);
  }
  get purge() {
    return this.repository('purge', memoryPurge);
  }
}

/** Options of {@link createMemoryStorage}; none yet, kept for symmetry with the SQL adapters. */
export type MemoryStorageOptions = Record<string, never>;

/**
 * Storage in process memory, for tests, demos and simulations. Transactions are real: writers are
 * serialised by a mutex, and a transaction that throws is undone from its journal, so it leaves
 * no trace in any table. Data is lost when the process ends.
 */
export function createMemoryStorage(_options: MemoryStorageOptions = {}): Storage {
  const state = new MemoryState();
  const mutex = new Mutex();
  let closed = false;

  return {
    capabilities: { concurrentTransactions: false, multiProcess: false, dialect: 'memory' },
    transaction(work) {
      return mutex.run(async () => {
        if (closed) throw new Error('The memory storage is closed.');
        const journal = new Journal();
        const tx = new MemoryTransaction(state, journal);
        try {
          return await work(tx);
        } catch (error) {
          journal.rollback();
          throw error;
        }
      });
    },
    async migrate() {},
    async close() {
      closed = true;
    },
  };
}
