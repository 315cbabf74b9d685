import {
  type BillingEngine,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  nextBillingManifest,
  type PaymentGateway,
  type Storage,
  type TestGateway,
} from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rejection } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const DAY = 86_400_000;
/** April 2026 has 30 days: a day is exactly 1/30 of the period. */
const APRIL = Date.parse('2026-04-01T00:00:00Z');
const PERIOD = 30 * DAY;

/** A gateway whose charges wait until `open()` is called, so a command can be held mid-payment. */
function gatedGateway(inner: TestGateway): { gateway: PaymentGateway; open: () => void; waiting: () => number } {
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let waiting = 0;
  const gateway: PaymentGateway = {
    ...inner,
    tokenize: (card) => inner.tokenize(card),
    lookup: (key) => inner.lookup(key),
    refund: (request) => inner.refund(request),
    async charge(request) {
      waiting += 1;
      await gate;
      return inner.charge(request);
    },
  };
  return { gateway, open: () => release(), waiting: () => waiting };
}

interface Fixture {
  engine: BillingEngine;
  clock: ManualClock;
  gateway: TestGateway;
  storage: Storage;
}

/**
 * The billing core on every adapter: what a period costs when changes combine (repeated
 * proration, coupons, components), collection that is exclusive per subscription, and what
 * `runDue` reports.
 */
export function billingCoreScenarios(harness: StorageHarness): void {
  describe(`billing core (${harness.name})`, () => {
    const open: Storage[] = [];
    afterEach(async () => {
      for (const storage of open.splice(0)) await (harness.destroy ? harness.destroy(storage) : storage.close());
    });

    async function fixture(): Promise<Fixture> {
      const storage = await harness.create();
      open.push(storage);
      const clock = new ManualClock('2026-04-01T00:00:00Z');
      const gateway = createTestGateway();
      const engine = createBillingEngine({ storage, clock, gateway });
      await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
      const acme = engine.site('acme');
      const family = await acme.catalog.createFamily({ name: 'Plans' });
      for (const [handle, price] of [
        ['a', 1000],
        ['b', 2500],
        ['c', 4000],
      ] as const) {
        await acme.catalog.createProduct(family.id, {
          name: handle.toUpperCase(),
          handle,
          priceInCents: price,
          interval: 1,
          intervalUnit: 'month',
        });
      }
      await acme.coupons.create({
        name: 'Half',
        code: 'HALF',
        percentage: '50',
        recurring: true,
        productFamilyId: family.id,
      });
      await acme.components.create(family.id, {
        kind: 'quantity_based_component',
        name: 'Seats',
        handle: 'seats',
        unitName: 'seat',
        pricingScheme: 'per_unit',
        unitPrice: '2.00',
      });
      return { engine, clock, gateway, storage };
    }

    const signup = (f: Fixture, extra: Record<string, unknown> = {}) =>
      f.engine.site('acme').subscriptions.create({
        productHandle: 'a',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
        ...extra,
      });

    /** The net of the charges, credits and adjustments billed for one period (payments left out). */
    async function periodNet(f: Fixture, id: number, periodIndex: number): Promise<number> {
      const lines = await f.engine.site('acme').subscriptions.transactions(id);
      return lines
        .filter((l) => l.periodIndex === periodIndex && l.type !== 'payment' && l.type !== 'refund')
        .reduce((sum, l) => sum + l.amountInCents, 0);
    }

    const at = (days: number) => new Date(APRIL + days * DAY);

    it('repeated migrations keeping the period bill each segment once (A -> B -> C -> A)', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f);
      const id = subscription.id;
      f.clock.set(at(10));
      const toB = await acme.subscriptions.previewMigration(id, { productHandle: 'b', preservePeriod: true });
      expect(toB.proratedAdjustmentInCents).toBe(-667);
      await acme.subscriptions.migrate(id, { productHandle: 'b', preservePeriod: true });
      f.clock.set(at(16));
      const toC = await acme.subscriptions.previewMigration(id, { productHandle: 'c', preservePeriod: true });
      // B's unused time only: 2500 x 14/30; A's time was credited once, at the first move.
      expect(toC.proratedAdjustmentInCents).toBe(-1167);
      expect(toC.chargeInCents).toBe(1867);
      const migrated = await acme.subscriptions.migrate(id, { productHandle: 'c', preservePeriod: true });
      expect(migrated.subscription.periodIndex).toBe(0);
      f.clock.set(at(19.5));
      await acme.subscriptions.migrate(id, { productHandle: 'a', preservePeriod: true });
      // April's net cost is the sum over segments of price x fraction of the period.
      const formula = (1000 * 10 + 2500 * 6 + 4000 * 3.5 + 1000 * 10.5) / 30;
      const net = await periodNet(f, id, 0);
      expect(Math.abs(net - formula)).toBeLessThanOrEqual(3);
      expect(net).toBe(1650);
      // 27.00 was paid (10.00, then 16.67 and 3.33 on the two upgrades); the move back to A left the
      // overpayment as credit, which the next renewal of A uses before charging the card.
      expect((await acme.subscriptions.get(id)).balanceInCents).toBe(1650 - 2700);
      const calls = f.gateway.chargeCalls;
      f.clock.set('2026-05-01T00:00:01Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 1, errors: 0 });
      expect(await periodNet(f, id, 1)).toBe(1000);
      expect(f.gateway.chargeCalls).toBe(calls);
      expect((await acme.subscriptions.get(id)).balanceInCents).toBe(-50);
    });

    it('credits a coupon-discounted period at what was paid, and discounts the new charge', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f, { couponCode: 'HALF' });
      expect(await periodNet(f, subscription.id, 0)).toBe(500);
      f.clock.set(at(15));
      const preview = await acme.subscriptions.previewMigration(subscription.id, {
        productHandle: 'b',
        preservePeriod: true,
      });
      // Half a period of A, paid 5.00 for the whole: 2.50 back, not 5.00.
      expect(preview.proratedAdjustmentInCents).toBe(-250);
      // Half a period of B (12.50) at 50%: 6.25.
      expect(preview.chargeInCents).toBe(625);
      await acme.subscriptions.migrate(subscription.id, { productHandle: 'b', preservePeriod: true });
      expect(await periodNet(f, subscription.id, 0)).toBe(250 + 625);
    });

    it('credits component charges with the product and charges full components for the new period', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f, { components: [{ handle: 'seats', allocatedQuantity: 5 }] });
      const id = subscription.id;
      // A 10.00 + 5 seats x 2.00 = 20.00 for April.
      expect(await periodNet(f, id, 0)).toBe(2000);
      f.clock.set(at(10));
      const preview = await acme.subscriptions.previewMigration(id, { productHandle: 'b' });
      expect(preview.proratedAdjustmentInCents).toBe(-1333);
      expect(preview.chargeInCents).toBe(2500 + 1000);
      const view = await acme.subscriptions.migrate(id, { productHandle: 'b' });
      expect(view.subscription.periodIndex).toBe(1);
      expect(await periodNet(f, id, 0)).toBe(2000 - 1333);
      const newPeriod = (await acme.subscriptions.transactions(id)).filter((l) => l.periodIndex === 1);
      expect(newPeriod.map((l) => [l.type, l.kind, l.amountInCents])).toEqual([
        ['charge', 'baseline', 2500],
        ['charge', 'quantity_based_component', 1000],
      ]);
      expect(view.balanceInCents).toBe(0);
    });

    it('of concurrent migrations of one subscription, one charges and the others are refused unpaid', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f);
      const callsAfterSignup = f.gateway.chargeCalls;
      // The migrations run on an engine whose gateway holds every charge until the test opens it.
      const second = gatedGateway(f.gateway);
      const engine = createBillingEngine({ storage: f.storage, clock: f.clock, gateway: second.gateway });
      const site = engine.site('acme');
      f.clock.set(at(10));
      let refusedSoFar = 0;
      const results = Promise.allSettled(
        Array.from({ length: 8 }, () =>
          site.subscriptions.migrate(subscription.id, { productHandle: 'c' }).catch((error: unknown) => {
            refusedSoFar += 1;
            throw error;
          }),
        ),
      );
      // Every command but the one at the gateway must be refused before that payment completes:
      // wait for exactly that (not for a time, which a loaded machine can outrun).
      await vi.waitFor(() => expect(second.waiting() === 1 && refusedSoFar === 7).toBe(true), {
        timeout: 60_000,
        interval: 5,
      });
      second.open();
      const settled = await results;
      const fulfilled = settled.filter((r) => r.status === 'fulfilled');
      const refused = settled.filter((r) => r.status === 'rejected');
      expect(fulfilled).toHaveLength(1);
      expect(refused).toHaveLength(7);
      for (const r of refused) {
        const reason = (r as PromiseRejectedResult).reason as { code?: string };
        expect(['conflict', 'validation']).toContain(reason.code);
      }
      expect(second.waiting()).toBe(1);
      expect(f.gateway.chargeCalls - callsAfterSignup).toBe(1);
      const view = await acme.subscriptions.get(subscription.id);
      expect(view.product.product.handle).toBe('c');
      expect(view.balanceInCents).toBe(0);
      // The claim was released: a later migration goes through.
      await site.subscriptions.migrate(subscription.id, { productHandle: 'b' });
      expect((await acme.subscriptions.get(subscription.id)).product.product.handle).toBe('b');
    });

    it('a refused concurrent migration changes nothing and takes no money', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f);
      f.clock.set(at(5));
      // Hold the subscription's collection claim as a migration in flight would.
      const siteId = (await f.engine.sites.get('acme')).id;
      await f.storage.transaction((tx) =>
        tx.idempotency.claim(siteId, 'open_collection', `subscription:${subscription.id}`, at(5), at(6)),
      );
      const before = await acme.subscriptions.transactions(subscription.id);
      const calls = f.gateway.chargeCalls;
      const error = await rejection(acme.subscriptions.migrate(subscription.id, { productHandle: 'c' }));
      expect(error.code).toBe('conflict');
      expect(error.httpStatus).toBe(409);
      expect(f.gateway.chargeCalls).toBe(calls);
      expect(await acme.subscriptions.transactions(subscription.id)).toEqual(before);
      expect((await acme.subscriptions.get(subscription.id)).product.product.handle).toBe('a');
      // The claim lapses if its holder died: after its hold, migrations work again.
      f.clock.set(at(6));
      await acme.subscriptions.migrate(subscription.id, { productHandle: 'c' });
    });

    it('a migration whose charge answer is lost never collects twice, and is refunded if taken', async () => {
      for (const charged of [true, false]) {
        const f = await fixture();
        const acme = f.engine.site('acme');
        const { subscription } = await signup(f);
        f.clock.set(at(10));
        // The answer is lost and the lookup that follows finds nothing it can trust.
        f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'migration:', charged });
        const lookup = f.gateway.lookup.bind(f.gateway);
        let lookupsDown = true;
        f.gateway.lookup = async (key) => {
          if (lookupsDown) throw new Error('no answer');
          return lookup(key);
        };
        const failed = await rejection(acme.subscriptions.migrate(subscription.id, { productHandle: 'c' }));
        expect(failed.code).toBe('gateway_error');
        expect((await acme.subscriptions.get(subscription.id)).product.product.handle).toBe('a');
        // While the outcome is open, a retry by the caller is refused before the gateway.
        const calls = f.gateway.chargeCalls;
        expect((await rejection(acme.subscriptions.migrate(subscription.id, { productHandle: 'c' }))).code).toBe(
          'conflict',
        );
        expect(f.gateway.chargeCalls).toBe(calls);
        // An hour later the reconciliation settles it: money taken is refunded in full.
        lookupsDown = false;
        f.clock.set(new Date(at(10).getTime() + 3_600_000));
        await f.engine.runDue();
        const taken = [...f.gateway.charges.entries()].filter(([key]) => key.startsWith('migration:'));
        expect(taken).toHaveLength(charged ? 1 : 0);
        for (const [, charge] of taken) expect(f.gateway.refunds.get(charge.transactionId)).toBe(charge.amountInCents);
        // The claim is gone with the settled attempt: the caller's retry now goes through, once.
        await acme.subscriptions.migrate(subscription.id, { productHandle: 'c' });
        const kept = [...f.gateway.charges.entries()].filter(
          ([key, c]) => key.startsWith('migration:') && f.gateway.refunds.get(c.transactionId) === undefined,
        );
        expect(kept).toHaveLength(1);
        expect((await acme.subscriptions.get(subscription.id)).balanceInCents).toBe(0);
      }
    });

    it('money taken for a migration that did not complete, whose refund is refused, goes on the ledger as a payment', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f);
      f.clock.set(at(10));
      f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'migration:', charged: true });
      const lookup = f.gateway.lookup.bind(f.gateway);
      let lookupsDown = true;
      f.gateway.lookup = async (key) => {
        if (lookupsDown) throw new Error('no answer');
        return lookup(key);
      };
      expect((await rejection(acme.subscriptions.migrate(subscription.id, { productHandle: 'c' }))).code).toBe(
        'gateway_error',
      );
      const balanceBefore = (await acme.subscriptions.get(subscription.id)).balanceInCents;
      // The reconciliation finds the money taken; the gateway refuses to give it back.
      lookupsDown = false;
      f.gateway.refund = async () => ({ outcome: 'failure', message: 'Refund refused by the issuer' });
      f.clock.set(new Date(at(10).getTime() + 3_600_000));
      await f.engine.runDue();
      const [taken] = [...f.gateway.charges.entries()].filter(([key]) => key.startsWith('migration:'));
      expect(taken).toBeDefined();
      const lines = await acme.subscriptions.transactions(subscription.id);
      const kept = lines.filter((l) => l.type === 'payment' && l.gatewayTransactionId === taken![1].transactionId);
      expect(kept.map((l) => [l.amountInCents, l.success])).toEqual([[taken![1].amountInCents, true]]);
      expect(kept[0]!.memo).toContain('the refund was refused: Refund refused by the issuer');
      const view = await acme.subscriptions.get(subscription.id);
      expect(view.product.product.handle).toBe('a');
      expect(view.balanceInCents).toBe(balanceBefore - taken![1].amountInCents);
      // The claim is released: the next migration goes through and uses the credit first.
      await acme.subscriptions.migrate(subscription.id, { productHandle: 'c' });
      expect((await acme.subscriptions.get(subscription.id)).product.product.handle).toBe('c');
    });

    it('a renewal within the hour of an allocation charge whose answer was lost never collects it again', async () => {
      for (const charged of [true, false]) {
        const f = await fixture();
        const acme = f.engine.site('acme');
        const seatsId = (await acme.components.list()).find((c) => c.component.handle === 'seats')!.component.id;
        const { subscription } = await signup(f);
        const id = subscription.id;
        f.clock.set('2026-04-30T23:30:00Z');
        // The allocation's answer is lost and the lookup that follows cannot be trusted either.
        f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'allocation:', charged });
        const lookup = f.gateway.lookup.bind(f.gateway);
        let lookupsDown = true;
        f.gateway.lookup = async (key) => {
          if (lookupsDown) throw new Error('no answer');
          return lookup(key);
        };
        const allocation = await acme.allocations.allocate(id, seatsId, { quantity: 5, upgradeCharge: 'full' });
        expect(allocation.payment?.status).toBe('unknown');
        expect(allocation.payment?.amountInCents).toBe(1000);
        // Within the hour, before the reconciliation: May renews (10.00 + 5 seats x 2.00) and collects
        // only May, not the allocation's 10.00 whose fate is not known yet.
        f.clock.set('2026-05-01T00:00:01Z');
        expect(await f.engine.runDue()).toMatchObject({ renewed: 1, errors: 0 });
        const renewal = [...f.gateway.charges.entries()].filter(([key]) => key.startsWith('renewal:'));
        expect(renewal.map(([, c]) => c.amountInCents)).toEqual([2000]);
        // While it is open, a command collecting from the balance leaves it out too: a migration
        // to B keeping the period owes B's rest of May less A's, not the allocation's 10.00.
        const preview = await acme.subscriptions.previewMigration(id, { productHandle: 'b', preservePeriod: true });
        expect(preview.paymentDueInCents).toBe(preview.chargeInCents + preview.proratedAdjustmentInCents);
        // The reconciliation settles it once, by key.
        lookupsDown = false;
        f.clock.set('2026-05-01T00:30:01Z');
        await f.engine.runDue();
        const taken = [...f.gateway.charges.values()].reduce((sum, c) => sum + c.amountInCents, 0);
        // Signup 10.00, May 20.00, and the allocation's 10.00 once if the gateway took it.
        expect(taken).toBe(1000 + 2000 + (charged ? 1000 : 0));
        const balance = (await acme.subscriptions.get(id)).balanceInCents;
        // Not taken: the allocation's charge stays owed for the next collection of the balance.
        expect(balance).toBe(charged ? 0 : 1000);
        // Settled, the amount is no longer held: the next change collects what the balance owes.
        const next = await acme.allocations.allocate(id, seatsId, { quantity: 6, upgradeCharge: 'full' });
        expect(next.payment?.status).toBe('succeeded');
        expect(next.payment?.amountInCents).toBe(200);
        await (harness.destroy ? harness.destroy(f.storage) : f.storage.close());
        open.splice(open.indexOf(f.storage), 1);
      }
    });

    it('the next billing manifest is what the next renewal writes (components, coupons, metered usage)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 7 }),
          fc.boolean(),
          fc.integer({ min: 0, max: 2 }),
          async (seats, coupon, product) => {
            const f = await fixture();
            const acme = f.engine.site('acme');
            const { subscription } = await signup(f, {
              productHandle: ['a', 'b', 'c'][product],
              components: [{ handle: 'seats', allocatedQuantity: seats }],
              ...(coupon ? { couponCode: 'HALF' } : {}),
            });
            f.clock.set(at(20));
            const manifest = await f.storage.transaction(async (tx) => {
              const site = (await tx.sites.findBySubdomain('acme'))!;
              const record = (await tx.subscriptions.findById(site.id, subscription.id))!;
              return nextBillingManifest(tx, site, record, f.clock.now());
            });
            f.clock.set('2026-05-01T00:00:01Z');
            await f.engine.runDue();
            const renewal = (await acme.subscriptions.transactions(subscription.id)).filter(
              (l) => l.periodIndex === 1 && l.type !== 'payment',
            );
            const charges = renewal.filter((l) => l.type === 'charge');
            expect(charges.map((l) => [l.kind, l.amountInCents, l.memo, l.componentId])).toEqual(
              manifest.lineItems.map((i) => [i.kind, i.amountInCents, i.memo, i.componentId]),
            );
            expect(renewal.reduce((sum, l) => sum + l.amountInCents, 0)).toBe(manifest.totalInCents);
            await (harness.destroy ? harness.destroy(f.storage) : f.storage.close());
            open.splice(open.indexOf(f.storage), 1);
          },
        ),
        { numRuns: harness.name === 'memory' ? 25 : 3 },
      );
    }, 120_000);

    it('bills ahead of the clock on test sites only: a live site runs to now at most', async () => {
      const f = await fixture();
      await f.engine.sites.create({ subdomain: 'shop', currency: 'USD', timeZone: 'UTC', mode: 'live' });
      const shop = f.engine.site('shop');
      const family = await shop.catalog.createFamily({ name: 'Plans' });
      await shop.catalog.createProduct(family.id, {
        name: 'A',
        handle: 'a',
        priceInCents: 1000,
        interval: 1,
        intervalUnit: 'month',
      });
      const customer = { firstName: 'A', lastName: 'B', email: 'a@b.co' };
      const live = await shop.subscriptions.create({ productHandle: 'a', customer, creditCard: VISA });
      const test = await signup(f);
      const shopId = (await f.engine.sites.get('shop')).id;
      const yearAhead = new Date('2027-04-01T00:00:00Z');
      const refused = await rejection(f.engine.runDue({ until: yearAhead, siteId: shopId }));
      expect(refused.messages[0]).toMatch(/^Until: may not pass the clock's now/);
      f.clock.set('2026-05-01T00:00:01Z');
      const summary = await f.engine.runDue({ until: yearAhead });
      // One renewal of the live subscription (May 1, due by now), twelve of the test one.
      expect(summary).toMatchObject({ renewed: 13, errors: 0 });
      expect((await shop.subscriptions.get(live.subscription.id)).subscription.periodIndex).toBe(1);
      expect((await f.engine.site('acme').subscriptions.get(test.subscription.id)).subscription.periodIndex).toBe(12);
    });

    it('counts a dunning retry that collects as recovered, not as a renewal', async () => {
      const f = await fixture();
      const { subscription } = await signup(f);
      f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
      f.clock.set('2026-05-01T00:00:01Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 0, declined: 1, recovered: 0 });
      expect((await f.engine.site('acme').subscriptions.get(subscription.id)).subscription.state).toBe('past_due');
      f.clock.set('2026-05-10T00:00:00Z');
      const summary = await f.engine.runDue();
      expect(summary).toMatchObject({ renewed: 0, recovered: 1, declined: 0, errors: 0 });
      expect((await f.engine.site('acme').subscriptions.get(subscription.id)).subscription.state).toBe('active');
    });

    it('for any sequence of product changes in one period, the period bills the segment formula', async () => {
      const prices: Record<string, number> = { a: 1000, b: 2500, c: 4000 };
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(fc.integer({ min: 1, max: PERIOD / 3_600_000 - 1 }), { minLength: 1, maxLength: 4 }),
          fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 4, maxLength: 4 }),
          fc.boolean(),
          async (hours, targets, coupon) => {
            const f = await fixture();
            const acme = f.engine.site('acme');
            const { subscription } = await signup(f, coupon ? { couponCode: 'HALF' } : {});
            const changes = [...hours].sort((x, y) => x - y);
            let product = 'a';
            const segments: [number, string][] = [[0, 'a']];
            for (const [i, hour] of changes.entries()) {
              const target = targets[i]!;
              if (target === product) continue;
              f.clock.set(new Date(APRIL + hour * 3_600_000));
              const preview = await acme.subscriptions.previewMigration(subscription.id, {
                productHandle: target,
                preservePeriod: true,
              });
              const beforeNet = await periodNet(f, subscription.id, 0);
              await acme.subscriptions.migrate(subscription.id, { productHandle: target, preservePeriod: true });
              // Preview equals effect.
              expect((await periodNet(f, subscription.id, 0)) - beforeNet).toBe(
                preview.proratedAdjustmentInCents + preview.chargeInCents,
              );
              // No credit exceeds what was paid for the remaining time.
              expect(-preview.proratedAdjustmentInCents).toBeLessThanOrEqual(beforeNet);
              segments.push([hour * 3_600_000, target]);
              product = target;
            }
            const rate = coupon ? 0.5 : 1;
            let formula = 0;
            for (const [i, [from, handle]] of segments.entries()) {
              const to = segments[i + 1]?.[0] ?? PERIOD;
              formula += (prices[handle]! * rate * (to - from)) / PERIOD;
            }
            const net = await periodNet(f, subscription.id, 0);
            expect(Math.abs(net - formula)).toBeLessThanOrEqual(segments.length);
            await (harness.destroy ? harness.destroy(f.storage) : f.storage.close());
            open.splice(open.indexOf(f.storage), 1);
          },
        ),
        { numRuns: harness.name === 'memory' ? 40 : 4 },
      );
    }, 120_000);

    it('for any mix of product and seat-quantity changes in one period, the period bills the segment formula', async () => {
      const prices: Record<string, number> = { a: 1000, b: 2500, c: 4000 };
      const SEAT = 200;
      const change = fc.oneof(
        fc.record({ kind: fc.constant('product' as const), target: fc.constantFrom('a', 'b', 'c') }),
        fc.record({ kind: fc.constant('seats' as const), quantity: fc.integer({ min: 0, max: 6 }) }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(fc.integer({ min: 1, max: PERIOD / 3_600_000 - 1 }), { minLength: 1, maxLength: 5 }),
          fc.array(change, { minLength: 5, maxLength: 5 }),
          fc.integer({ min: 0, max: 4 }),
          fc.boolean(),
          async (hours, steps, initialSeats, coupon) => {
            const f = await fixture();
            const acme = f.engine.site('acme');
            const seats = (await acme.components.list()).find((c) => c.component.handle === 'seats');
            const seatsId = seats?.component.id ?? 0;
            const { subscription } = await signup(f, {
              ...(coupon ? { couponCode: 'HALF' } : {}),
              ...(initialSeats > 0 ? { components: [{ componentId: seatsId, allocatedQuantity: initialSeats }] } : {}),
            });
            // Segments of the period: [start in ms, product, seats].
            const segments: [number, string, number][] = [[0, 'a', initialSeats]];
            for (const [i, hour] of [...hours].sort((x, y) => x - y).entries()) {
              const step = steps[i]!;
              const [, product, quantity] = segments.at(-1)!;
              f.clock.set(new Date(APRIL + hour * 3_600_000));
              const before = await periodNet(f, subscription.id, 0);
              if (step.kind === 'product') {
                if (step.target === product) continue;
                await acme.subscriptions.migrate(subscription.id, { productHandle: step.target, preservePeriod: true });
                segments.push([hour * 3_600_000, step.target, quantity]);
              } else {
                if (step.quantity === quantity) continue;
                await acme.allocations.allocate(subscription.id, seatsId, {
                  quantity: step.quantity,
                  upgradeCharge: 'prorated',
                  downgradeCredit: 'prorated',
                });
                segments.push([hour * 3_600_000, product, step.quantity]);
              }
              // No change credits more than the period's billing so far.
              expect(await periodNet(f, subscription.id, 0)).toBeGreaterThanOrEqual(0);
              expect(before).toBeGreaterThanOrEqual(0);
            }
            const rate = coupon ? 0.5 : 1;
            let formula = 0;
            for (const [i, [from, handle, quantity]] of segments.entries()) {
              const to = segments[i + 1]?.[0] ?? PERIOD;
              formula += ((prices[handle]! + SEAT * quantity) * rate * (to - from)) / PERIOD;
            }
            const net = await periodNet(f, subscription.id, 0);
            expect(Math.abs(net - formula)).toBeLessThanOrEqual(2 * segments.length);
            await (harness.destroy ? harness.destroy(f.storage) : f.storage.close());
            open.splice(open.indexOf(f.storage), 1);
          },
        ),
        { numRuns: harness.name === 'memory' ? 40 : 4 },
      );
    }, 180_000);
  });
}
