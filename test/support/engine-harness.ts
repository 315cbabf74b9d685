import {
  type BillingEngine,
  BillingError,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type Storage,
  type TestGateway,
} from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { afterEach, beforeEach } from 'vitest';

/** A fresh engine per test over the harness's storage, with a manual clock and the test gateway. */
export interface EngineFixture {
  engine: BillingEngine;
  clock: ManualClock;
  storage: Storage;
  gateway: TestGateway;
}

/** Registers hooks that give every test a fresh engine; returns a getter for the current one. */
export function useEngine(harness: StorageHarness, start = '2026-01-15T12:00:00Z'): () => EngineFixture {
  let current: EngineFixture | undefined;
  beforeEach(async () => {
    const storage = await harness.create();
    const clock = new ManualClock(start);
    const gateway = createTestGateway();
    current = { engine: createBillingEngine({ storage, clock, gateway }), clock, storage, gateway };
  });
  afterEach(async () => {
    const fixture = current;
    current = undefined;
    if (fixture) await (harness.destroy ? harness.destroy(fixture.storage) : fixture.storage.close());
  });
  return () => {
    if (!current) throw new Error('engine fixture used outside a test');
    return current;
  };
}

/** Runs `promise` and returns the BillingError it rejects with (fails the test if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<BillingError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof BillingError) return error;
    throw error;
  }
  throw new Error('expected a BillingError, but the promise resolved');
}
