import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { runStorageConformance } from 'billing-engine/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

runStorageConformance(
  { describe, it, expect, beforeEach, afterEach, beforeAll, afterAll },
  { name: 'memory', create: async () => createMemoryStorage() },
);
