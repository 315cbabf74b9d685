import { EventEmitter } from 'node:events';
import { createBillingEngine, type MrrMovementRecord, type Storage } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/services/command-runner.js';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/**
 * `acme` (USD, UTC) with products basic (10.00 a month), pro (20.00 a month), annual (120.00 every
 * 12 months) and trial (10.00 a month after a 14-day free trial), components Seats (4.00 a seat)
 * and Data (metered, 0.50 a GB); and `globex`, to show that movements stay in their site.
 */
async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  await f.engine.sites.create({ subdomain: 'globex', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const globex = f.engine.site('globex');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const product = (handle: string, priceInCents: number, interval: number) =>
    acme.catalog.createProduct(family.id, {
      name: `${handle} plan`,
      handle,
      priceInCents,
      interval,
      intervalUnit: 'month',
    });
  await product('basic', 1000, 1);
  await product('pro', 2000, 1);
  await product('annual', 12_000, 12);
  await acme.catalog.createProduct(family.id, {
    name: 'trial plan',
    handle: 'trial',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 0,
  });
  const seats = await acme.components.create(family.id, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '4',
  });
  const data = await acme.components.create(family.id, {
    name: 'Data',
    kind: 'metered',
    unitName: 'GB',
    handle: 'data',
    unitPrice: '0.5',
  });
  let n = 0;
  const subscribe = async (productHandle: string, extra: Record<string, unknown> = {}) =>
    (
      await acme.subscriptions.create({
        productHandle,
        customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` },
        creditCard: VISA,
        ...extra,
      })
    ).subscription;
  /** The subscription's movements, oldest first. */
  const movements = async (subscriptionId: number) =>
    (await acme.reports.listMrrMovements({ subscriptionId, direction: 'asc', perPage: 50 })).items;
  return { acme, globex, seats: seats.component.id, data: data.component.id, subscribe, movements };
}

/** The figures of a movement a test compares. */
function figures(m: MrrMovementRecord) {
  return {
    category: m.category,
    amount: m.amountInCents,
    plan: m.planAmountInCents,
    usage: m.usageAmountInCents,
    mrr: m.mrrInCents,
  };
}

/**
 * The storage as an engine from before the history (migration 22) saw it: every movement it
 * would write is dropped.
 */
function withoutHistory(storage: Storage): Storage {
  return {
    capabilities: storage.capabilities,
    migrate: () => storage.migrate(),
    close: async () => {},
    transaction: (work, options) =>
      storage.transaction(
        (tx) =>
          work(
            new Proxy(tx, {
              get(target, property, receiver) {
                if (property !== 'mrrMovements') return Reflect.get(target, property, receiver);
                return {
                  ...target.mrrMovements,
                  insert: async (movement: Omit<MrrMovementRecord, 'id'>) => ({ id: 0, ...movement }),
                };
              },
            }),
          ),
        options,
      ),
  };
}

/** MRR movements recorded by commands, listed by the reports, on every adapter. */
export function mrrMovementsSuite(harness: StorageHarness): void {
  describe(`MRR movements (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-02-10T15:00:00Z');

    it('records new business at signup with its lines, at the command instant, and nothing for an unchanged MRR', async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('basic', { components: [{ componentId: s.seats, allocatedQuantity: 2 }] });
      const [first, ...rest] = await s.movements(sub.id);
      expect(rest).toEqual([]);
      expect(figures(first!)).toEqual({ category: 'new_business', amount: 1800, plan: 1800, usage: 0, mrr: 1800 });
      expect(first!.occurredAt.toISOString()).toBe('2026-02-10T15:00:00.000Z');
      expect(first!.subscriberName).toBe('Ada Lovelace');
      expect(first!.lineItems).toEqual([
        expect.objectContaining({
          componentId: 0,
          name: 'basic plan',
          mrrInCents: 1000,
          movementInCents: 1000,
          quantity: 1,
          prevQuantity: 0,
          recurring: true,
        }),
        expect.objectContaining({
          componentId: s.seats,
          name: 'Seats',
          mrrInCents: 800,
          movementInCents: 800,
          quantity: 2,
          prevQuantity: 0,
          recurring: true,
        }),
      ]);
      expect(first!.lineItems[0]!.productId).toBe(sub.productId);
      expect(first!.lineItems[0]!.pricePointId).toEqual(expect.any(Number));
      expect(first!.lineItems[1]!.pricePointId).toEqual(expect.any(Number));

      // A billing-date change and a renewal emit subscription events but leave MRR as it was.
      f.clock.set('2026-02-11T10:00:00Z');
      await s.acme.subscriptions.changeBillingDate(sub.id, '2026-03-05T00:00:00Z');
      f.clock.set('2026-03-05T01:00:00Z');
      await f.engine.runDue();
      expect((await s.acme.subscriptions.get(sub.id)).subscription.periodIndex).toBeGreaterThan(0);
      expect(await s.movements(sub.id)).toHaveLength(1);
    });

    it('records expansion, contraction, churn and reactivation, each a difference from the last', async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('basic', { components: [{ componentId: s.seats, allocatedQuantity: 2 }] });
      f.clock.set('2026-02-11T10:00:00Z');
      await s.acme.allocations.allocate(sub.id, s.seats, { quantity: 5 });
      await s.acme.allocations.allocate(sub.id, s.seats, { quantity: 1 });
      await s.acme.subscriptions.migrate(sub.id, { productHandle: 'pro' });
      await s.acme.subscriptions.cancel(sub.id, {});
      await s.acme.subscriptions.reactivate(sub.id, {});
      const list = await s.movements(sub.id);
      expect(list.map(figures)).toEqual([
        { category: 'new_business', amount: 1800, plan: 1800, usage: 0, mrr: 1800 },
        { category: 'expansion', amount: 1200, plan: 1200, usage: 0, mrr: 3000 },
        { category: 'contraction', amount: -1600, plan: -1600, usage: 0, mrr: 1400 },
        { category: 'expansion', amount: 1000, plan: 1000, usage: 0, mrr: 2400 },
        { category: 'churn', amount: -2400, plan: -2400, usage: 0, mrr: 0 },
        { category: 'reactivation', amount: 2400, plan: 2400, usage: 0, mrr: 2400 },
      ]);
      // The contraction's seat line: from 5 seats to 1.
      expect(list[2]!.lineItems.find((l) => l.componentId === s.seats)).toMatchObject({
        quantity: 1,
        prevQuantity: 5,
        mrrInCents: 400,
        movementInCents: -1600,
      });
      // The migration's product line names the new product.
      expect(list[3]!.lineItems[0]).toMatchObject({ name: 'pro plan', mrrInCents: 2000, movementInCents: 1000 });
      // The churn keeps the configuration, each line at 0.
      expect(list[4]!.lineItems.map((l) => [l.componentId, l.mrrInCents, l.movementInCents])).toEqual([
        [0, 0, -2000],
        [s.seats, 0, -400],
      ]);
      // The last movement left what the MRR report computes now.
      const now = await s.acme.reports.mrr({ subscriptionId: sub.id });
      expect(list.at(-1)!.mrrInCents).toBe(now.amountInCents);
      expect(list.at(-1)!.planMrrInCents).toBe(now.planAmountInCents);
    });

    it('records usage in the usage part, and a line taken to 0 as gone', async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('annual', { components: [{ componentId: s.seats, allocatedQuantity: 1 }] });
      await s.acme.allocations.recordUsage(sub.id, s.data, { quantity: 10 });
      await s.acme.allocations.allocate(sub.id, s.seats, { quantity: 0 });
      const list = await s.movements(sub.id);
      // 120.00 + 4.00 a year is 10.33 a month; 10 GB at 0.50 a year is 0.42 a month.
      expect(list.map(figures)).toEqual([
        { category: 'new_business', amount: 1033, plan: 1033, usage: 0, mrr: 1033 },
        { category: 'expansion', amount: 42, plan: 0, usage: 42, mrr: 1075 },
        { category: 'contraction', amount: -33, plan: -33, usage: 0, mrr: 1042 },
      ]);
      // A part's lines add up to the part.
      expect(list[0]!.lineItems.map((l) => l.mrrInCents)).toEqual([1000, 33]);
      expect(list[1]!.lineItems.find((l) => l.componentId === s.data)).toMatchObject({
        recurring: false,
        quantity: 10,
        mrrInCents: 42,
      });
      expect(list[2]!.lineItems.find((l) => l.componentId === s.seats)).toMatchObject({
        quantity: 0,
        prevQuantity: 1,
        mrrInCents: 0,
        movementInCents: -33,
      });
      const now = await s.acme.reports.mrr({ subscriptionId: sub.id });
      expect(list.at(-1)!.mrrInCents).toBe(now.amountInCents);
      expect(list.at(-1)!.usageMrrInCents).toBe(now.usageAmountInCents);
    });

    it('starts the history of a subscription older than it from what it bills, without listing a movement', async () => {
      const f = fixture();
      const s = await setup(f);
      // Signed up by an engine that kept no history: no movement at all.
      const before = createBillingEngine({ storage: withoutHistory(f.storage), clock: f.clock, gateway: f.gateway });
      const { subscription: sub } = await before.site('acme').subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Old', lastName: 'Timer', email: 'old@example.com' },
        creditCard: VISA,
      });
      expect(await s.movements(sub.id)).toEqual([]);
      // Its first renewal under the history is not new business: it records where the history starts.
      f.clock.set('2026-03-10T15:00:00Z');
      await f.engine.runDue();
      expect((await s.acme.subscriptions.get(sub.id)).subscription.currentPeriodStartedAt.toISOString()).toBe(
        '2026-03-10T15:00:00.000Z',
      );
      expect(await s.movements(sub.id)).toEqual([]);
      expect((await s.acme.reports.listMrrMovements({ direction: 'asc' })).items).toEqual([]);
      // The next change is measured from it.
      await s.acme.subscriptions.migrate(sub.id, { productHandle: 'pro' });
      expect((await s.movements(sub.id)).map(figures)).toEqual([
        { category: 'expansion', amount: 1000, plan: 1000, usage: 0, mrr: 2000 },
      ]);
    });

    it('records nothing while a trial is free, and new business when it converts', async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('trial');
      expect(await s.movements(sub.id)).toEqual([]);
      f.clock.set('2026-02-24T16:00:00Z');
      await f.engine.runDue();
      expect((await s.acme.subscriptions.get(sub.id)).subscription.state).toBe('active');
      const list = await s.movements(sub.id);
      expect(list.map(figures)).toEqual([{ category: 'new_business', amount: 1000, plan: 1000, usage: 0, mrr: 1000 }]);
      // The due work runs at the instant it was due: the trial's end.
      expect(list[0]!.occurredAt.toISOString()).toBe('2026-02-24T15:00:00.000Z');
    });

    it('records nothing for a rolled-back command or a preview', async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('basic');
      const site = await f.storage.transaction((tx) => tx.sites.findBySubdomain('acme'));
      // A command that cancels the subscription and records its event, then fails in its transaction.
      const failing = runCommand(
        {
          storage: f.storage,
          clock: f.clock,
          emitter: new EventEmitter(),
          onEvents: async () => {
            throw new Error('fan-out failed');
          },
        },
        async (ctx) => {
          const current = await ctx.tx.subscriptions.findById(site!.id, sub.id);
          await ctx.tx.subscriptions.updateAtVersion(site!.id, sub.id, current!.version, { state: 'cancelled' });
          ctx.record({
            siteId: site!.id,
            key: 'subscription_state_change',
            subjectType: 'subscription',
            subjectId: sub.id,
            payload: {},
          });
        },
      );
      await expect(failing).rejects.toThrow('fan-out failed');
      expect((await s.acme.subscriptions.get(sub.id)).subscription.state).toBe('active');
      await f.engine.preview('acme', (handle) => handle.subscriptions.migrate(sub.id, { productHandle: 'pro' }));
      expect((await s.movements(sub.id)).map((m) => m.category)).toEqual(['new_business']);
    });

    it('records a change a command marks without an event (touchMrr), once per subscription', async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('basic');
      const site = await f.storage.transaction((tx) => tx.sites.findBySubdomain('acme'));
      f.clock.set('2026-02-12T09:00:00Z');
      await runCommand({ storage: f.storage, clock: f.clock, emitter: new EventEmitter() }, async (ctx) => {
        const current = await ctx.tx.subscriptions.findById(site!.id, sub.id);
        await ctx.tx.subscriptions.updateAtVersion(site!.id, sub.id, current!.version, { state: 'on_hold' });
        ctx.touchMrr?.(site!.id, sub.id);
        ctx.touchMrr?.(site!.id, sub.id);
      });
      const list = await s.movements(sub.id);
      expect(list.map(figures)).toEqual([
        { category: 'new_business', amount: 1000, plan: 1000, usage: 0, mrr: 1000 },
        { category: 'churn', amount: -1000, plan: -1000, usage: 0, mrr: 0 },
      ]);
      expect(list[1]!.occurredAt.toISOString()).toBe('2026-02-12T09:00:00.000Z');
      // A command that marks nothing and records no event reads nothing and records nothing.
      await runCommand({ storage: f.storage, clock: f.clock, emitter: new EventEmitter() }, async (ctx) => {
        const current = await ctx.tx.subscriptions.findById(site!.id, sub.id);
        await ctx.tx.subscriptions.updateAtVersion(site!.id, sub.id, current!.version, { state: 'active' });
      });
      expect(await s.movements(sub.id)).toHaveLength(2);
    });

    it('lists newest first by default, pages by 10 up to 50, and stays in its site', async () => {
      const f = fixture();
      const s = await setup(f);
      const a = await s.subscribe('basic');
      const b = await s.subscribe('pro');
      await s.acme.allocations.allocate(a.id, s.seats, { quantity: 3 });
      const page = await s.acme.reports.listMrrMovements();
      expect(page.items.map((m) => [m.subscriptionId, m.category])).toEqual([
        [a.id, 'expansion'],
        [b.id, 'new_business'],
        [a.id, 'new_business'],
      ]);
      expect(page).toMatchObject({ page: 1, perPage: 10, totalCount: 3 });
      const asc = await s.acme.reports.listMrrMovements({ direction: 'asc', page: 2, perPage: 2 });
      expect(asc.items.map((m) => m.subscriptionId)).toEqual([a.id]);
      expect((await s.acme.reports.listMrrMovements({ perPage: 500 })).perPage).toBe(50);
      const onlyB = await s.acme.reports.listMrrMovements({ subscriptionId: b.id });
      expect(onlyB.items.map((m) => m.subscriptionId)).toEqual([b.id]);
      expect(onlyB.totalCount).toBe(1);
      // Another site sees none of them, even naming the subscription.
      expect((await s.globex.reports.listMrrMovements()).items).toEqual([]);
      expect((await s.globex.reports.listMrrMovements({ subscriptionId: a.id })).totalCount).toBe(0);
      // Bad input is refused.
      expect((await rejection(s.acme.reports.listMrrMovements({ subscriptionId: 0 }))).code).toBe('validation');
      expect((await rejection(s.acme.reports.listMrrMovements({ page: 0 }))).code).toBe('validation');
      expect((await rejection(s.acme.reports.listMrrMovements({ direction: 'up' as unknown as 'asc' }))).code).toBe(
        'validation',
      );
    });

    it('removes a purged subscription’s movements, and all of them with the site’s data', async () => {
      const f = fixture();
      const s = await setup(f);
      const a = await s.subscribe('basic');
      const b = await s.subscribe('pro');
      await s.acme.subscriptions.purge(a.id, { ack: a.customerId });
      expect((await s.acme.reports.listMrrMovements()).items.map((m) => m.subscriptionId)).toEqual([b.id]);
      await f.engine.sites.clearData('acme');
      expect((await s.acme.reports.listMrrMovements()).totalCount).toBe(0);
    });
  });
}
