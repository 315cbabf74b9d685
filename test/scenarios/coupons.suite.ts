import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const customer = (n: number) => ({ firstName: 'A', lastName: 'B', email: `c${n}@example.com` });

async function setup(f: EngineFixture, product: Record<string, unknown> = {}) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 3000,
    interval: 1,
    intervalUnit: 'month',
    ...product,
  });
  return { acme, family };
}

const rows = async (f: EngineFixture, id: number) =>
  (await f.engine.site('acme').subscriptions.transactions(id)).map((l) => [
    l.createdAt.toISOString().slice(0, 10),
    l.type,
    l.kind,
    l.amountInCents,
    l.endingBalanceInCents,
  ]);

/** Coupons at signup and renewal, on every adapter. */
export function couponScenarios(harness: StorageHarness): void {
  describe(`coupons (${harness.name})`, () => {
    const fixture = useEngine(harness, '2027-01-10T00:00:00Z');

    it('discounts three periods with a recurring coupon, then bills the full price', async () => {
      const f = fixture();
      const { acme, family } = await setup(f);
      await acme.coupons.create({
        name: 'Launch',
        code: 'launch20',
        percentage: '20',
        recurring: true,
        durationPeriodCount: 3,
        productFamilyId: family.id,
        description: '20% off',
      });
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: customer(1),
        creditCard: VISA,
        couponCode: 'LAUNCH20',
      });
      expect(sub.subscription.couponCodes).toEqual(['LAUNCH20']);
      f.clock.set('2027-05-01T00:00:00Z');
      await f.engine.runDue();
      expect(await rows(f, sub.subscription.id)).toEqual([
        ['2027-01-10', 'charge', 'baseline', 3000, 3000],
        ['2027-01-10', 'adjustment', 'coupon', -600, 2400],
        ['2027-01-10', 'payment', null, 2400, 0],
        ['2027-02-10', 'charge', 'baseline', 3000, 3000],
        ['2027-02-10', 'adjustment', 'coupon', -600, 2400],
        ['2027-02-10', 'payment', null, 2400, 0],
        ['2027-03-10', 'charge', 'baseline', 3000, 3000],
        ['2027-03-10', 'adjustment', 'coupon', -600, 2400],
        ['2027-03-10', 'payment', null, 2400, 0],
        ['2027-04-10', 'charge', 'baseline', 3000, 3000],
        ['2027-04-10', 'payment', null, 3000, 0],
      ]);
      const [line] = (await acme.subscriptions.transactions(sub.subscription.id)).filter((l) => l.kind === 'coupon');
      expect(line?.memo).toBe('Coupon: LAUNCH20 - 20% off');
      expect((await acme.coupons.findByCode('launch20')).redemptions).toBe(1);
    });

    it('carries an oversized amount coupon as credit only when negative balances are allowed (C1, C2)', async () => {
      const f = fixture();
      const { acme, family } = await setup(f);
      await acme.coupons.create({
        name: 'Big',
        code: 'BIG',
        amountInCents: 10000,
        allowNegativeBalance: true,
        productFamilyId: family.id,
      });
      await acme.coupons.create({
        name: 'Capped',
        code: 'CAPPED',
        amountInCents: 10000,
        allowNegativeBalance: false,
        productFamilyId: family.id,
      });
      const big = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: customer(1),
        creditCard: VISA,
        couponCode: 'BIG',
      });
      expect(big.balanceInCents).toBe(-7000);
      const capped = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: customer(2),
        creditCard: VISA,
        couponCode: 'CAPPED',
      });
      expect(capped.balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(0);
      f.clock.set('2027-02-11T00:00:00Z');
      await f.engine.runDue();
      // The credit pays the next renewal: nothing is charged to the card.
      expect((await acme.subscriptions.get(big.subscription.id)).balanceInCents).toBe(-4000);
      expect(f.gateway.charges.size).toBe(1);
    });

    it('rejects an unknown coupon with the service message (C4) before charging anything', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const error = await rejection(
        acme.subscriptions.create({
          productHandle: 'basic',
          customer: customer(1),
          creditCard: VISA,
          couponCode: 'abc',
        }),
      );
      expect(error.messages).toEqual(["Coupon Code: 'abc' - Coupon code could not be found."]);
      expect(f.gateway.chargeCalls).toBe(0);
    });

    it('enforces the conversion limit and gives a use back when the signup card is declined', async () => {
      const f = fixture();
      const { acme, family } = await setup(f);
      await acme.coupons.create({
        name: 'Once',
        code: 'ONCE',
        percentage: '50',
        conversionLimit: 1,
        productFamilyId: family.id,
      });
      const declined = await rejection(
        acme.subscriptions.create({
          productHandle: 'basic',
          customer: customer(1),
          creditCard: { ...VISA, fullNumber: '2' },
          couponCode: 'ONCE',
        }),
      );
      expect(declined.code).toBe('payment_declined');
      expect((await acme.coupons.findByCode('ONCE')).redemptions).toBe(0);
      const first = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: customer(2),
        creditCard: VISA,
        couponCode: 'ONCE',
      });
      expect(first.balanceInCents).toBe(0);
      const second = await rejection(
        acme.subscriptions.create({
          productHandle: 'basic',
          customer: customer(3),
          creditCard: VISA,
          couponCode: 'ONCE',
        }),
      );
      expect(second.messages).toEqual(["Coupon Code: 'ONCE' - Coupon has reached its usage limit."]);
    });

    it('defers a one-time coupon past a free trial to the first amount due', async () => {
      const f = fixture();
      const { acme, family } = await setup(f, { trialInterval: 7, trialIntervalUnit: 'day', trialPriceInCents: 0 });
      await acme.coupons.create({ name: 'Welcome', code: 'WELCOME', amountInCents: 500, productFamilyId: family.id });
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: customer(1),
        creditCard: VISA,
        couponCode: 'WELCOME',
      });
      expect(await rows(f, sub.subscription.id)).toEqual([]);
      f.clock.set('2027-03-01T00:00:00Z');
      await f.engine.runDue();
      expect(await rows(f, sub.subscription.id)).toEqual([
        ['2027-01-17', 'charge', 'baseline', 3000, 3000],
        ['2027-01-17', 'adjustment', 'coupon', -500, 2500],
        ['2027-01-17', 'payment', null, 2500, 0],
        ['2027-02-17', 'charge', 'baseline', 3000, 3000],
        ['2027-02-17', 'payment', null, 3000, 0],
      ]);
    });

    it('sets subscription metafields at signup and refuses unknown ones before charging', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      await acme.metafields.createFields('subscriptions', {
        name: 'color',
        inputType: 'dropdown',
        enum: ['red', 'blue'],
      });
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: customer(1),
        creditCard: VISA,
        metafields: { color: 'blue' },
      });
      expect(
        (await acme.metafields.listMetadata('subscriptions', sub.subscription.id)).map((m) => [m.name, m.value]),
      ).toEqual([['color', 'blue']]);
      expect((await acme.subscriptions.list({ metadata: { color: 'blue' } })).map((v) => v.subscription.id)).toEqual([
        sub.subscription.id,
      ]);
      const calls = f.gateway.chargeCalls;
      const bad = await rejection(
        acme.subscriptions.create({
          productHandle: 'basic',
          customer: customer(2),
          creditCard: VISA,
          metafields: { size: 'xl', color: 'green' },
        }),
      );
      expect(bad.messages).toEqual([
        "Metafield: 'size' does not exist.",
        "Value: 'green' is not one of the allowed values for 'color'.",
      ]);
      expect(f.gateway.chargeCalls).toBe(calls);
    });
  });
}
