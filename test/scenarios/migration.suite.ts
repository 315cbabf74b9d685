import type { BillingEvent } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const basic = await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 3000,
    interval: 1,
    intervalUnit: 'month',
  });
  const pro = await acme.catalog.createProduct(family.id, {
    name: 'Pro',
    handle: 'pro',
    priceInCents: 9000,
    interval: 1,
    intervalUnit: 'month',
    initialChargeInCents: 500,
  });
  const events: BillingEvent[] = [];
  f.engine.on('*', (e) => events.push(e));
  const sub = await acme.subscriptions.create({
    productHandle: 'basic',
    customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
    creditCard: VISA,
  });
  return { acme, basic, pro, events, sub };
}

const rows = async (f: EngineFixture, id: number) =>
  (await f.engine.site('acme').subscriptions.transactions(id)).map((l) => [
    l.type,
    l.kind,
    l.amountInCents,
    l.endingBalanceInCents,
  ]);

/** Product changes and prorated migrations, on every adapter. April has 30 days: the arithmetic is exact. */
export function migrationScenarios(harness: StorageHarness): void {
  describe(`product changes and migrations (${harness.name})`, () => {
    const fixture = useEngine(harness, '2027-04-01T00:00:00Z');

    it('upgrades a third into the period: credit for unused time, full new price, period restarts', async () => {
      const f = fixture();
      const { acme, events, sub } = await setup(f);
      f.clock.set('2027-04-11T00:00:00Z');
      const preview = await acme.subscriptions.previewMigration(sub.subscription.id, { productHandle: 'pro' });
      expect(preview).toEqual({
        proratedAdjustmentInCents: -2000,
        chargeInCents: 9000,
        paymentDueInCents: 7000,
        creditAppliedInCents: 2000,
      });
      const before = await rows(f, sub.subscription.id);
      expect(await rows(f, sub.subscription.id)).toEqual(before);
      const migrated = await acme.subscriptions.migrate(sub.subscription.id, { productHandle: 'pro' });
      expect(migrated.product.product.handle).toBe('pro');
      expect(migrated.subscription.currentPeriodStartedAt.toISOString()).toBe('2027-04-11T00:00:00.000Z');
      expect(migrated.subscription.currentPeriodEndsAt.toISOString()).toBe('2027-05-11T00:00:00.000Z');
      expect(migrated.balanceInCents).toBe(0);
      expect((await rows(f, sub.subscription.id)).slice(2)).toEqual([
        ['adjustment', 'prorated', -2000, -2000],
        ['charge', 'baseline', 9000, 7000],
        ['payment', null, 7000, 0],
      ]);
      expect(events.filter((e) => e.key === 'upgrade_downgrade_success')).toHaveLength(1);
      f.clock.set('2027-05-12T00:00:00Z');
      await f.engine.runDue();
      expect((await rows(f, sub.subscription.id)).slice(-2)).toEqual([
        ['charge', 'baseline', 9000, 9000],
        ['payment', null, 9000, 0],
      ]);
    });

    it('keeps the period with preservePeriod and prorates the new price', async () => {
      const f = fixture();
      const { acme, sub } = await setup(f);
      f.clock.set('2027-04-16T00:00:00Z');
      const preview = await acme.subscriptions.previewMigration(sub.subscription.id, {
        productHandle: 'pro',
        preservePeriod: true,
      });
      expect(preview).toEqual({
        proratedAdjustmentInCents: -1500,
        chargeInCents: 4500,
        paymentDueInCents: 3000,
        creditAppliedInCents: 1500,
      });
      const migrated = await acme.subscriptions.migrate(sub.subscription.id, {
        productHandle: 'pro',
        preservePeriod: true,
        includeInitialCharge: true,
      });
      expect(migrated.subscription.currentPeriodEndsAt.toISOString()).toBe('2027-05-01T00:00:00.000Z');
      expect((await rows(f, sub.subscription.id)).slice(2)).toEqual([
        ['adjustment', 'prorated', -1500, -1500],
        ['charge', 'baseline', 4500, 3000],
        ['charge', 'initial', 500, 3500],
        ['payment', null, 3500, 0],
      ]);
    });

    it('gives at least one cent of credit a moment after the period started (T11)', async () => {
      const f = fixture();
      const { acme, sub } = await setup(f);
      f.clock.set('2027-04-30T23:59:59.999Z');
      const preview = await acme.subscriptions.previewMigration(sub.subscription.id, { productHandle: 'pro' });
      expect(preview.proratedAdjustmentInCents).toBe(-1);
      expect(preview.chargeInCents).toBe(9000);
    });

    it('leaves everything as it was when the migration payment is declined', async () => {
      const f = fixture();
      const { acme, events, sub } = await setup(f);
      f.clock.set('2027-04-11T00:00:00Z');
      const before = await acme.subscriptions.get(sub.subscription.id);
      f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'migration:' });
      const error = await rejection(acme.subscriptions.migrate(sub.subscription.id, { productHandle: 'pro' }));
      expect(error.code).toBe('payment_declined');
      const after = await acme.subscriptions.get(sub.subscription.id);
      expect(after.subscription).toEqual(before.subscription);
      expect(await rows(f, sub.subscription.id)).toHaveLength(2);
      expect(events.map((e) => e.key)).toContain('upgrade_downgrade_failure');
      expect(events.map((e) => e.key)).not.toContain('upgrade_downgrade_success');
    });

    it('rejects bad migrations with the service messages', async () => {
      const f = fixture();
      const { acme, sub } = await setup(f);
      expect(
        (await rejection(acme.subscriptions.migrate(sub.subscription.id, { productHandle: 'nope' }))).message,
      ).toBe('Invalid Product');
      expect((await rejection(acme.subscriptions.previewMigration(sub.subscription.id, {}))).message).toBe(
        'Product must be specified',
      );
      expect((await rejection(acme.subscriptions.migrate(sub.subscription.id, { productHandle: 'basic' }))).code).toBe(
        'validation',
      );
      await acme.subscriptions.cancel(sub.subscription.id);
      expect(
        (await rejection(acme.subscriptions.previewMigration(sub.subscription.id, { productHandle: 'pro' }))).message,
      ).toBe('Subscription must be active');
    });

    it('changes the product now without charge, or at the next renewal when delayed', async () => {
      const f = fixture();
      const { acme, events, sub } = await setup(f);
      const changed = await acme.subscriptions.changeProduct(sub.subscription.id, { productHandle: 'pro' });
      expect(changed.product.product.handle).toBe('pro');
      expect(changed.balanceInCents).toBe(0);
      expect(events.filter((e) => e.key === 'subscription_product_change')).toHaveLength(1);
      await acme.subscriptions.changeProduct(sub.subscription.id, { productHandle: 'basic', delayed: true });
      expect((await acme.subscriptions.get(sub.subscription.id)).product.product.handle).toBe('pro');
      f.clock.set('2027-05-02T00:00:00Z');
      await f.engine.runDue();
      const view = await acme.subscriptions.get(sub.subscription.id);
      expect(view.product.product.handle).toBe('basic');
      expect((await rows(f, sub.subscription.id)).slice(-2)).toEqual([
        ['charge', 'baseline', 3000, 3000],
        ['payment', null, 3000, 0],
      ]);
    });

    it('moves a subscriber to the current version of its product', async () => {
      const f = fixture();
      const { acme, basic, sub } = await setup(f);
      await acme.catalog.updateProduct(basic.product.id, { priceInCents: 6000 });
      f.clock.set('2027-04-16T00:00:00Z');
      const moved = await acme.subscriptions.migrate(sub.subscription.id, {
        productHandle: 'basic',
        productVersion: 2,
        preservePeriod: true,
      });
      expect(moved.subscription.productVersion).toBe(2);
      expect((await rows(f, sub.subscription.id)).slice(2, 4)).toEqual([
        ['adjustment', 'prorated', -1500, -1500],
        ['charge', 'baseline', 3000, 1500],
      ]);
    });
  });
}
