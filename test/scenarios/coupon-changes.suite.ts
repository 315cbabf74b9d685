import {
  type BillingEngine,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type Storage,
  type SubscriptionView,
  type TestGateway,
} from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type AddCouponOptions, SubscriptionCouponService } from '../../src/services/subscription-coupon-service.js';
import { rejection } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const DAY = 86_400_000;
/** April 2026 has 30 days: a day is exactly 1/30 of the period. */
const APRIL = Date.parse('2026-04-01T00:00:00Z');
const at = (days: number) => new Date(APRIL + days * DAY);

export interface CouponFixture {
  engine: BillingEngine;
  clock: ManualClock;
  gateway: TestGateway;
  storage: Storage;
  seatsId: number;
  familyId: number;
}

/** The coupon commands of a live subscription on site `acme`. */
export interface CouponCommands {
  add(id: number, codes: string[] | string, options?: AddCouponOptions): Promise<SubscriptionView>;
  remove(id: number, code?: string): Promise<SubscriptionView>;
}

/**
 * The coupon commands through the engine's `site.subscriptions` when they are bound there, else
 * through the service over the same storage and clock (the commands write no ledger line, so the
 * engine's document and webhook wrapping has nothing to add).
 */
export function couponCommands(f: Pick<CouponFixture, 'engine' | 'storage' | 'clock' | 'gateway'>): CouponCommands {
  const bound = f.engine.site('acme').subscriptions as unknown as {
    addCoupon?: (id: number, codes: string[] | string, options?: AddCouponOptions) => Promise<SubscriptionView>;
    removeCoupon?: (id: number, code?: string) => Promise<SubscriptionView>;
  };
  if (typeof bound.addCoupon === 'function' && typeof bound.removeCoupon === 'function') {
    const { addCoupon, removeCoupon } = bound;
    return { add: (id, codes, options) => addCoupon(id, codes, options), remove: (id, code) => removeCoupon(id, code) };
  }
  const service = new SubscriptionCouponService({
    storage: f.storage,
    clock: f.clock,
    gateway: f.gateway,
    emitter: { emit() {} },
  });
  return {
    add: (id, codes, options) => service.addCoupon('acme', id, codes, options),
    remove: (id, code) => service.removeCoupon('acme', id, code),
  };
}

/**
 * A site `acme` (UTC, USD) on April 1st 2026 with products A 10.00, B 25.00, C 40.00 monthly, a
 * `Seats` component at 2.00 a seat, and coupons: HALF (50% recurring, stackable), TENTH (10%
 * recurring, stackable), ONCE (20% one-time), LAST (50% recurring for one period), SOLO (5%, not
 * stackable), FLAT (5.00 recurring), OLD (archived), SPRING (ends 2026-04-05), LIMIT (one
 * redemption), and ELSEWHERE (another family's).
 */
export async function couponFixture(storage: Storage): Promise<CouponFixture> {
  const clock = new ManualClock('2026-04-01T00:00:00Z');
  const gateway = createTestGateway();
  const engine = createBillingEngine({ storage, clock, gateway });
  await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const other = await acme.catalog.createFamily({ name: 'Other' });
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
  const coupon = (code: string, fields: Record<string, unknown>) =>
    acme.coupons.create({ name: code, code, productFamilyId: family.id, ...fields });
  await coupon('HALF', { percentage: '50', recurring: true, stackable: true });
  await coupon('TENTH', { percentage: '10', recurring: true, stackable: true });
  await coupon('ONCE', { percentage: '20', recurring: false, stackable: true });
  await coupon('LAST', { percentage: '50', recurring: true, durationPeriodCount: 1, stackable: true });
  await coupon('SOLO', { percentage: '5', recurring: true, stackable: false });
  await coupon('FLAT', { amountInCents: 500, recurring: true, stackable: true });
  const old = await coupon('OLD', { percentage: '30', recurring: true, stackable: true });
  await acme.coupons.archive(old.id);
  await coupon('SPRING', { percentage: '30', recurring: true, stackable: true, endDate: '2026-04-05' });
  await coupon('LIMIT', { percentage: '30', recurring: true, stackable: true, conversionLimit: 1 });
  await acme.coupons.create({ name: 'Elsewhere', code: 'ELSEWHERE', percentage: '30', productFamilyId: other.id });
  const seats = await acme.components.create(family.id, {
    kind: 'quantity_based_component',
    name: 'Seats',
    handle: 'seats',
    unitName: 'seat',
    pricingScheme: 'per_unit',
    unitPrice: '2.00',
  });
  return { engine, clock, gateway, storage, seatsId: seats.component.id, familyId: family.id };
}

/** The net of the charges, credits and adjustments billed for one period (payments left out). */
export async function periodNet(f: Pick<CouponFixture, 'engine'>, id: number, periodIndex: number): Promise<number> {
  const lines = await f.engine.site('acme').subscriptions.transactions(id);
  return lines
    .filter((l) => l.periodIndex === periodIndex && l.type !== 'payment' && l.type !== 'refund')
    .reduce((sum, l) => sum + l.amountInCents, 0);
}

/**
 * Coupons added to and removed from a live subscription, on every adapter: they take effect at
 * the next renewal and leave the current period as it was billed; the period's changes are
 * discounted at the rate the period was paid at, including in a coupon's last discounted period.
 */
export function couponChangeScenarios(harness: StorageHarness): void {
  describe(`coupon changes (${harness.name})`, () => {
    const open: Storage[] = [];
    afterEach(async () => {
      for (const storage of open.splice(0)) await (harness.destroy ? harness.destroy(storage) : storage.close());
    });

    async function fixture(): Promise<CouponFixture> {
      const storage = await harness.create();
      open.push(storage);
      return couponFixture(storage);
    }

    const signup = (f: CouponFixture, extra: Record<string, unknown> = {}) =>
      f.engine.site('acme').subscriptions.create({
        productHandle: 'a',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
        ...extra,
      });

    const renew = async (f: CouponFixture) => {
      f.clock.set('2026-05-01T00:00:01Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 1, errors: 0 });
    };

    it('a coupon added mid-period bills nothing now and discounts from the next renewal', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f);
      f.clock.set(at(10));
      const before = await acme.subscriptions.transactions(subscription.id);
      const view = await couponCommands(f).add(subscription.id, ['half']);
      expect(view.subscription.couponCodes).toEqual(['HALF']);
      expect(view.balanceInCents).toBe(0);
      expect(await acme.subscriptions.transactions(subscription.id)).toEqual(before);
      expect((await acme.coupons.findByCode('HALF')).redemptions).toBe(1);
      await renew(f);
      expect(await periodNet(f, subscription.id, 1)).toBe(500);
      f.clock.set('2026-06-01T00:00:01Z');
      await f.engine.runDue();
      expect(await periodNet(f, subscription.id, 2)).toBe(500);
    });

    it('a coupon added mid-period does not discount that period’s changes; the next period’s it does', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f);
      f.clock.set(at(10));
      await couponCommands(f).add(subscription.id, 'HALF');
      f.clock.set(at(15));
      // 5 seats for half of April, at the rate April was paid at (no discount): 5 x 2.00 x 1/2.
      const seats = await acme.allocations.allocate(subscription.id, f.seatsId, { quantity: 5 });
      expect([seats.chargeInCents, seats.discountInCents]).toEqual([500, 0]);
      expect(await periodNet(f, subscription.id, 0)).toBe(1500);
      await renew(f);
      // May: (10.00 + 5 x 2.00) at 50%.
      expect(await periodNet(f, subscription.id, 1)).toBe(1000);
      f.clock.set('2026-05-16T12:00:00Z');
      const more = await acme.allocations.allocate(subscription.id, f.seatsId, { quantity: 6 });
      // One seat for half of May (31 days), discounted 50%.
      expect([more.chargeInCents, more.discountInCents]).toEqual([100, 50]);
    });

    it('a one-time coupon added to a subscription discounts the next renewal only', async () => {
      const f = await fixture();
      const { subscription } = await signup(f);
      f.clock.set(at(3));
      await couponCommands(f).add(subscription.id, ['ONCE']);
      await renew(f);
      expect(await periodNet(f, subscription.id, 1)).toBe(800);
      f.clock.set('2026-06-01T00:00:01Z');
      await f.engine.runDue();
      expect(await periodNet(f, subscription.id, 2)).toBe(1000);
    });

    it('a coupon added during a trial discounts the first amount due', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const family = f.familyId;
      await acme.catalog.createProduct(family, {
        name: 'T',
        handle: 't',
        priceInCents: 3000,
        interval: 1,
        intervalUnit: 'month',
        trialInterval: 14,
        trialIntervalUnit: 'day',
        trialPriceInCents: 0,
      });
      const { subscription } = await signup(f, { productHandle: 't' });
      expect(subscription.state).toBe('trialing');
      f.clock.set(at(2));
      await couponCommands(f).add(subscription.id, ['HALF']);
      f.clock.set(at(14.5));
      await f.engine.runDue();
      const view = await acme.subscriptions.get(subscription.id);
      expect(view.subscription.state).toBe('active');
      expect(await periodNet(f, subscription.id, view.subscription.periodIndex)).toBe(1500);
    });

    it('a removed coupon keeps pricing the period it was billed with and stops at the next renewal', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f, {
        couponCode: 'HALF',
        components: [{ componentId: f.seatsId, allocatedQuantity: 4 }],
      });
      // April: (10.00 + 4 x 2.00) at 50%.
      expect(await periodNet(f, subscription.id, 0)).toBe(900);
      f.clock.set(at(10));
      const before = await acme.subscriptions.transactions(subscription.id);
      const view = await couponCommands(f).remove(subscription.id, 'half');
      expect(view.subscription.couponCodes).toEqual([]);
      expect(await acme.subscriptions.transactions(subscription.id)).toEqual(before);
      f.clock.set(at(15));
      // Two seats fewer for half of April: they were paid at 50%, so 2.00 comes back, not 4.00.
      const down = await acme.allocations.allocate(subscription.id, f.seatsId, { quantity: 2 });
      expect([down.creditInCents, down.discountInCents]).toEqual([200, 100]);
      expect(await periodNet(f, subscription.id, 0)).toBe(800);
      await renew(f);
      // May at the full price: 10.00 + 2 x 2.00.
      expect(await periodNet(f, subscription.id, 1)).toBe(1400);
    });

    it('removes the only coupon when no code is given; refuses without changing anything otherwise', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const commands = couponCommands(f);
      const { subscription } = await signup(f, { couponCodes: ['HALF', 'TENTH'] });
      const id = subscription.id;
      const several = await rejection(commands.remove(id));
      expect(several.httpStatus).toBe(422);
      const notApplied = await rejection(commands.remove(id, 'ONCE'));
      expect(notApplied.httpStatus).toBe(422);
      expect(notApplied.messages).toEqual(["Coupon code: 'ONCE' is not applied to this subscription."]);
      expect((await acme.subscriptions.get(id)).subscription.couponCodes).toEqual(['HALF', 'TENTH']);
      await commands.remove(id, 'TENTH');
      expect((await commands.remove(id)).subscription.couponCodes).toEqual([]);
      const none = await rejection(commands.remove(id));
      expect(none.httpStatus).toBe(422);
      expect(none.messages).toEqual(["There's no coupon applied to this subscription"]);
    });

    it('refuses unusable codes with the service’s messages, all at once, and writes nothing', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const commands = couponCommands(f);
      const { subscription } = await signup(f, { couponCode: 'HALF' });
      const id = subscription.id;
      f.clock.set(at(10));
      const cases: [string[], string[]][] = [
        [['NOPE'], ["Coupon Codes: 'NOPE' - Coupon code could not be found."]],
        [['ELSEWHERE'], ["Coupon Codes: 'ELSEWHERE' - Coupon code could not be found."]],
        [['OLD'], ["Coupon Codes: 'OLD' - Coupon is invalid."]],
        [['SPRING'], ["Coupon Codes: 'SPRING' - Coupon code has expired."]],
        [['half'], ["Coupon Codes: 'half' - Coupon is already applied to this subscription."]],
        [['TENTH', 'tenth'], ["Coupon Codes: 'tenth' - Coupon is listed more than once."]],
        [['SOLO'], ["Coupon Codes: 'SOLO' - That coupon is not stackable"]],
        // A good code beside a bad one is not added either: all or none.
        [
          ['TENTH', 'NOPE', 'OLD'],
          ["Coupon Codes: 'NOPE' - Coupon code could not be found.", "Coupon Codes: 'OLD' - Coupon is invalid."],
        ],
        [[], ['Coupon Codes: cannot be blank.']],
        [[''], ['Coupon Codes: cannot be blank.']],
      ];
      for (const [codes, messages] of cases) {
        const error = await rejection(commands.add(id, codes));
        expect([error.code, error.httpStatus, error.messages]).toEqual(['validation', 422, messages]);
      }
      const view = await acme.subscriptions.get(id);
      expect(view.subscription.couponCodes).toEqual(['HALF']);
      expect((await acme.coupons.findByCode('TENTH')).redemptions).toBe(0);
      // A subscription that is over cannot take coupons.
      await acme.subscriptions.cancel(id);
      const ended = await rejection(commands.add(id, ['TENTH']));
      expect(ended.httpStatus).toBe(422);
      expect((await rejection(commands.remove(id, 'HALF'))).httpStatus).toBe(422);
      expect((await rejection(commands.add(999_999, ['TENTH']))).httpStatus).toBe(404);
    });

    it('a used-up coupon is refused and a non-stackable coupon blocks any other', async () => {
      const f = await fixture();
      const commands = couponCommands(f);
      const first = await signup(f);
      await commands.add(first.subscription.id, ['LIMIT']);
      const second = await signup(f, { customer: { firstName: 'C', lastName: 'D', email: 'c@d.co' } });
      const used = await rejection(commands.add(second.subscription.id, ['LIMIT']));
      expect(used.messages).toEqual(["Coupon Codes: 'LIMIT' - Coupon has reached its usage limit."]);
      await commands.add(second.subscription.id, ['SOLO']);
      const blocked = await rejection(commands.add(second.subscription.id, ['TENTH']));
      expect(blocked.messages).toEqual(['Coupon Codes: Subscription already has at least one non-stackable coupon.']);
      // Stackable coupons stack; they discount the next renewal together.
      await commands.add(first.subscription.id, ['HALF', 'TENTH']);
      expect((await f.engine.site('acme').subscriptions.get(first.subscription.id)).subscription.couponCodes).toEqual([
        'LIMIT',
        'HALF',
        'TENTH',
      ]);
    });

    it('the query form replaces every coupon of the subscription', async () => {
      const f = await fixture();
      const commands = couponCommands(f);
      const { subscription } = await signup(f, { couponCodes: ['HALF', 'TENTH'] });
      const view = await commands.add(subscription.id, 'ONCE', { replace: true });
      expect(view.subscription.couponCodes).toEqual(['ONCE']);
      // Replacing with a coupon already there keeps it once.
      expect((await commands.add(subscription.id, 'ONCE', { replace: true })).subscription.couponCodes).toEqual([
        'ONCE',
      ]);
      await renew(f);
      expect(await periodNet(f, subscription.id, 1)).toBe(800);
    });

    it('a coupon in its last discounted period discounts allocation changes in that period (gap A)', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f, {
        couponCode: 'LAST',
        components: [{ componentId: f.seatsId, allocatedQuantity: 2 }],
      });
      // April is LAST's one period: (10.00 + 2 x 2.00) at 50%.
      expect(await periodNet(f, subscription.id, 0)).toBe(700);
      f.clock.set(at(15));
      const up = await acme.allocations.allocate(subscription.id, f.seatsId, { quantity: 6 });
      // Four seats for half of April: 4.00, half off.
      expect([up.chargeInCents, up.discountInCents]).toEqual([400, 200]);
      const preview = await acme.allocations.previewAllocation(subscription.id, f.seatsId, { quantity: 2 });
      expect([preview.creditInCents, preview.discountInCents]).toEqual([400, 200]);
      f.clock.set(at(20));
      // Back to two seats for the last third: paid at 50%, so 2.67 x 1/2 comes back.
      const down = await acme.allocations.allocate(subscription.id, f.seatsId, { quantity: 2 });
      expect([down.creditInCents, down.discountInCents]).toEqual([267, 134]);
      expect(await periodNet(f, subscription.id, 0)).toBe(700 + 200 - 133);
      await renew(f);
      // LAST is spent: May is full price, and so are its changes.
      expect(await periodNet(f, subscription.id, 1)).toBe(1400);
      f.clock.set('2026-05-16T12:00:00Z');
      const may = await acme.allocations.allocate(subscription.id, f.seatsId, { quantity: 3 });
      expect([may.chargeInCents, may.discountInCents]).toEqual([100, 0]);
    });

    it('a coupon in its last discounted period discounts a migration that keeps the period (gap A)', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f, { couponCode: 'LAST' });
      f.clock.set(at(15));
      const preview = await acme.subscriptions.previewMigration(subscription.id, {
        productHandle: 'c',
        preservePeriod: true,
      });
      // Half of A paid at 50% comes back (2.50); half of C (20.00) at 50%.
      expect([preview.proratedAdjustmentInCents, preview.chargeInCents]).toEqual([-250, 1000]);
      await acme.subscriptions.migrate(subscription.id, { productHandle: 'c', preservePeriod: true });
      expect(await periodNet(f, subscription.id, 0)).toBe(500 - 250 + 1000);
      await renew(f);
      expect(await periodNet(f, subscription.id, 1)).toBe(4000);
    });

    it('a coupon removed mid-period still discounts a migration that keeps the period', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const { subscription } = await signup(f, { couponCode: 'HALF' });
      f.clock.set(at(6));
      await couponCommands(f).remove(subscription.id, 'HALF');
      f.clock.set(at(15));
      await acme.subscriptions.migrate(subscription.id, { productHandle: 'b', preservePeriod: true });
      // A at 50% for half of April, B at 50% for the other half.
      expect(await periodNet(f, subscription.id, 0)).toBe(250 + 625);
      // A migration that starts a new period is the next assessment: the coupon is gone there.
      f.clock.set(at(20));
      const moved = await acme.subscriptions.migrate(subscription.id, { productHandle: 'c' });
      expect(await periodNet(f, subscription.id, moved.subscription.periodIndex)).toBe(4000);
    });
  });
}
