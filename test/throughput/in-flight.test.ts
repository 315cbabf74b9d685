/**
 * `runDue` keeps up to `concurrency` gateway calls in flight, never more (also under a gateway's
 * own `maxConcurrentCharges`), and a live worker keeps its leases while a slow gateway holds its
 * items, so another worker never takes them over. The gateway here answers only when the test
 * says so, which makes every count exact rather than a matter of timing.
 */
import {
  type BillingEngine,
  BillingError,
  type ChargeRequest,
  type ChargeResult,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type PaymentGateway,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { describe, expect, it, vi } from 'vitest';

const START = '2026-03-02T09:00:00Z';
const RENEWAL = '2026-04-02T09:00:00Z';

/** A gateway whose renewal charges wait until released; signups and everything else answer at once. */
function heldGateway(extra: { maxConcurrentCharges?: number } = {}) {
  const inner = createTestGateway();
  const waiting: { key: string; release: () => void }[] = [];
  let holding = true;
  let inFlight = 0;
  let maxInFlight = 0;
  const gateway: PaymentGateway & { maxConcurrentCharges?: number } = {
    ...extra,
    name: inner.name,
    supportsRefunds: true,
    tokenize: (card) => inner.tokenize(card),
    refund: (request) => inner.refund(request),
    lookup: (key) => inner.lookup(key),
    async charge(request: ChargeRequest): Promise<ChargeResult> {
      if (!request.idempotencyKey.startsWith('renewal:') || !holding) return inner.charge(request);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((release) => waiting.push({ key: request.idempotencyKey, release }));
      inFlight -= 1;
      return inner.charge(request);
    },
  };
  return {
    gateway,
    inner,
    waiting,
    get maxInFlight() {
      return maxInFlight;
    },
    /** Answers the oldest held call. */
    releaseOne() {
      waiting.shift()!.release();
    },
    /** Answers every held call, and every later one at once. */
    releaseAll() {
      holding = false;
      for (const held of waiting.splice(0)) held.release();
    },
  };
}

async function book(engine: BillingEngine, count: number): Promise<{ siteId: number; ids: number[] }> {
  const { site } = await engine.sites.create({ subdomain: 'held', currency: 'USD', timeZone: 'UTC' });
  const acme = engine.site('held');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const created = await acme.subscriptions.create({
      productHandle: 'basic',
      customer: { firstName: 'Held', lastName: `${i}`, email: `h${i}@example.com` },
      creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2035 },
    });
    ids.push(created.subscription.id);
  }
  return { siteId: site.id, ids };
}

/** How long a wait for something that will happen may take on a loaded machine (vitest's default is 1 s). */
const PATIENCE = { timeout: 30_000, interval: 10 };

/** Lets every ready promise and timer run, so that a lane that could start a call would have. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('runDue: gateway calls in flight', () => {
  it('keeps exactly `concurrency` charges in flight while more are due, and renews every one', async () => {
    const held = heldGateway();
    const clock = new ManualClock(START);
    const engine = createBillingEngine({ storage: createMemoryStorage(), clock, gateway: held.gateway });
    const { ids } = await book(engine, 7);
    clock.set(RENEWAL);
    const run = engine.runDue({ concurrency: 3 });
    await vi.waitFor(() => expect(held.waiting).toHaveLength(3), PATIENCE);
    await settle();
    expect(held.waiting).toHaveLength(3);
    // One answer frees one lane, which starts the next charge.
    held.releaseOne();
    await vi.waitFor(() => expect(held.waiting).toHaveLength(3), PATIENCE);
    held.releaseAll();
    expect(await run).toMatchObject({ renewed: 7, errors: 0 });
    expect(held.maxInFlight).toBe(3);
    expect([...held.inner.charges.keys()].filter((k) => k.startsWith('renewal:')).sort()).toEqual(
      ids.map((id) => `renewal:${id}:1`).sort(),
    );
  });

  it("caps the calls in flight at the gateway's maxConcurrentCharges", async () => {
    const held = heldGateway({ maxConcurrentCharges: 2 });
    const clock = new ManualClock(START);
    const engine = createBillingEngine({ storage: createMemoryStorage(), clock, gateway: held.gateway });
    await book(engine, 5);
    clock.set(RENEWAL);
    const run = engine.runDue();
    await vi.waitFor(() => expect(held.waiting).toHaveLength(2), PATIENCE);
    await settle();
    expect(held.waiting).toHaveLength(2);
    held.releaseAll();
    expect(await run).toMatchObject({ renewed: 5, errors: 0 });
    expect(held.maxInFlight).toBe(2);
  });

  it('refuses a concurrency that is not a positive whole number, and runs nothing', async () => {
    const held = heldGateway();
    const clock = new ManualClock(START);
    const engine = createBillingEngine({ storage: createMemoryStorage(), clock, gateway: held.gateway });
    await book(engine, 1);
    clock.set(RENEWAL);
    const due = await engine.countDue();
    expect(due).toBeGreaterThan(0);
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      const error = await engine.runDue({ concurrency }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BillingError);
      expect((error as BillingError).message).toMatch(/Concurrency/);
    }
    expect(await engine.countDue()).toBe(due);
    expect(held.inner.chargeCalls).toBe(1);
  });

  it('extends the leases of held items while a slow gateway holds them, so another worker takes none over', async () => {
    const held = heldGateway();
    const clock = new ManualClock(START);
    const storage = createMemoryStorage();
    const engine = createBillingEngine({ storage, clock, gateway: held.gateway });
    const { siteId, ids } = await book(engine, 6);
    clock.set(RENEWAL);
    const claimedAt = clock.now().getTime();
    const run = engine.runDue({ concurrency: 2 });
    await vi.waitFor(() => expect(held.waiting).toHaveLength(2), PATIENCE);
    const leases = async () =>
      (
        await storage.transaction(async (tx) =>
          Promise.all(ids.map((id) => tx.dueWork.pendingFor(siteId, id, ['renewal']))),
        )
      )
        .flat()
        .filter((row) => row.status === 'claimed')
        .map((row) => row.leaseUntil!.getTime());
    expect(await leases()).toEqual(Array(6).fill(claimedAt + 5 * 60_000));
    // Four minutes on, one answer comes: the worker renews what it still holds (five items).
    clock.advance({ minutes: 4 });
    held.releaseOne();
    await vi.waitFor(async () => expect(await leases()).toEqual(Array(5).fill(claimedAt + 9 * 60_000)), PATIENCE);
    // Past the first lease: a second worker takes none of the held renewals over (had it taken
    // one, its own charge would wait on this gateway and its run would not return).
    clock.advance({ minutes: 2 });
    const other = createBillingEngine({ storage, clock, gateway: held.gateway });
    expect(await other.runDue({ concurrency: 1 })).toMatchObject({ renewed: 0, errors: 0 });
    expect(held.waiting).toHaveLength(2);
    held.releaseAll();
    expect(await run).toMatchObject({ renewed: 6, errors: 0 });
  });
});
