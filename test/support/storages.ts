import { createMemoryStorage } from 'billing-engine/adapters/memory';
import type { StorageHarness } from 'billing-engine/testing';

/** A fresh memory storage per test. */
export const memoryHarness: StorageHarness = {
  name: 'memory',
  create: async () => createMemoryStorage(),
  capabilities: { concurrentTransactions: false, multiProcess: false, dialect: 'memory' },
};
