import type { Storage, StorageTransaction } from 'billing-engine';
import { MemoryState } from './memory-state.js';
import { Journal, Mutex } from './memory-table.js';
import { memoryCatalog } from './repositories/catalog.js';
import { memoryComponents } from './repositories/components.js';
import { memoryCoupons } from './repositories/coupons.js';
import { memoryCredentials } from './repositories/credentials.js';
import { memoryCustomers } from './repositories/customers.js';
import { memoryDirectCalls } from './repositories/direct-calls.js';
import { memoryDueWork } from './repositories/due-work.js';
import { memoryIdempotency } from './repositories/idempotency.js';
import { memoryLedger } from './repositories/ledger.js';
import { memoryMetafields } from './repositories/metafields.js';
import { memoryNotes } from './repositories/notes.js';
import { memoryOutbox } from './repositories/outbox.js';
import { memoryPayments } from './repositories/payments.js';
import { memorySiteData } from './repositories/site-data.js';
import { memorySites } from './repositories/sites.js';
import { memorySubscriptionComponents } from './repositories/subscription-components.js';
import { memorySubscriptions } from './repositories/subscriptions.js';
import { memoryWebhooks } from './repositories/webhooks.js';

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
        const tx: StorageTransaction = {
          sites: memorySites(state, journal),
          siteData: memorySiteData(state, journal),
          credentials: memoryCredentials(state, journal),
          idempotency: memoryIdempotency(state, journal),
          dueWork: memoryDueWork(state, journal),
          outbox: memoryOutbox(state, journal),
          catalog: memoryCatalog(state, journal),
          customers: memoryCustomers(state, journal),
          subscriptions: memorySubscriptions(state, journal),
          ledger: memoryLedger(state, journal),
          payments: memoryPayments(state, journal),
          components: memoryComponents(state, journal),
          coupons: memoryCoupons(state, journal),
          metafields: memoryMetafields(state, journal),
          notes: memoryNotes(state, journal),
          subscriptionComponents: memorySubscriptionComponents(state, journal),
          webhooks: memoryWebhooks(state, journal),
          directCalls: memoryDirectCalls(state, journal),
        };
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
