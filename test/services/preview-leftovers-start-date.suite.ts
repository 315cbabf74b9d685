import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

/**
 * A billing-date change of a delayed signup (`awaiting_signup`) moves its start, as the service's
 * "it can be ... had its billing date changed" says: nothing is charged until the new start, which
 * bills what the start at that instant bills; a date not in the future starts it now.
 */

const START = '2026-03-02T10:00:00Z';
const DELAYED_TO = '2026-03-05T00:00:00Z';
const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const ADA = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const site = f.engine.site('acme');
  const family = await site.catalog.createFamily({ name: 'Plans' });
  await site.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
    initialChargeInCents: 500,
  });
  await site.catalog.createProduct(family.id, {
    name: 'Trial',
    handle: 'trial',
    priceInCents: 2000,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 100,
  });
  return site;
}

type Site = Awaited<ReturnType<typeof setup>>;

function delayed(site: Site, extra: Record<string, unknown> = {}) {
  return site.subscriptions.create({
    productHandle: 'basic',
    customer: ADA,
    creditCard: VISA,
    initialBillingAt: DELAYED_TO,
    ...extra,
  });
}

async function billed(site: Site, id: number) {
  return (await site.subscriptions.transactions(id)).map((t) => [t.type, t.kind, t.amountInCents, t.createdAt]);
}

async function runTo(f: EngineFixture, at: string) {
  f.clock.set(at);
  return f.engine.runDue();
}

export function previewLeftoversStartDateSuite(harness: StorageHarness): void {
  describe(`billing-date changes of a delayed signup (${harness.name})`, () => {
    const fixture = useEngine(harness, START);

    it('moves the start: nothing at the old date, the start and its charges at the new one', async () => {
      const f = fixture();
      const site = await setup(f);
      const { subscription } = await delayed(site);
      const moved = await site.subscriptions.changeBillingDate(subscription.id, '2026-03-10T00:00:00Z');
      expect(moved.subscription).toMatchObject({
        state: 'awaiting_signup',
        nextAssessmentAt: new Date('2026-03-10T00:00:00Z'),
        currentPeriodEndsAt: new Date('2026-03-10T00:00:00Z'),
      });
      const events = await site.events.listForSubscription(subscription.id, { perPage: 50 });
      const change = events.find((e) => e.event.key === 'billing_date_change');
      expect(change?.event.payload).toMatchObject({
        subscription: {
          previous_billing_date: '2026-03-05T00:00:00.000Z',
          next_billing_date: '2026-03-10T00:00:00.000Z',
        },
      });

      await runTo(f, DELAYED_TO);
      expect((await site.subscriptions.get(subscription.id)).subscription.state).toBe('awaiting_signup');
      expect(await billed(site, subscription.id)).toEqual([]);
      expect(f.gateway.chargeCalls).toBe(0);

      await runTo(f, '2026-03-10T00:00:00Z');
      const started = await site.subscriptions.get(subscription.id);
      expect(started.subscription).toMatchObject({
        state: 'active',
        currentPeriodStartedAt: new Date('2026-03-10T00:00:00Z'),
        currentPeriodEndsAt: new Date('2026-04-10T00:00:00Z'),
      });
      const at = new Date('2026-03-10T00:00:00Z');
      expect(await billed(site, subscription.id)).toEqual([
        ['charge', 'baseline', 1000, at],
        ['charge', 'initial', 500, at],
        ['payment', null, 1500, at],
      ]);
      expect(f.gateway.chargeCalls).toBe(1);
    });

    it('a trial product starts its trial at the new start and renews after it', async () => {
      const f = fixture();
      const site = await setup(f);
      const { subscription } = await delayed(site, { productHandle: 'trial' });
      await site.subscriptions.changeBillingDate(subscription.id, '2026-03-08T00:00:00Z');
      await runTo(f, '2026-03-08T00:00:00Z');
      const started = await site.subscriptions.get(subscription.id);
      expect(started.subscription).toMatchObject({
        state: 'trialing',
        trialEndedAt: new Date('2026-03-22T00:00:00Z'),
        nextAssessmentAt: new Date('2026-03-22T00:00:00Z'),
      });
      await runTo(f, '2026-03-22T00:00:00Z');
      const renewed = await site.subscriptions.get(subscription.id);
      expect([renewed.subscription.state, renewed.subscription.currentPeriodEndsAt]).toEqual([
        'active',
        new Date('2026-04-22T00:00:00Z'),
      ]);
    });

    it('a date not in the future starts the subscription now', async () => {
      const f = fixture();
      const site = await setup(f);
      const { subscription } = await delayed(site);
      const started = await site.subscriptions.changeBillingDate(subscription.id, '2026-03-01T00:00:00Z');
      expect(started.subscription).toMatchObject({
        state: 'active',
        currentPeriodStartedAt: new Date(START),
        currentPeriodEndsAt: new Date('2026-04-02T10:00:00Z'),
      });
      expect(started.balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(1);
      // The old start's due work is gone: nothing more happens then.
      await runTo(f, DELAYED_TO);
      expect((await billed(site, subscription.id)).length).toBe(3);
    });

    it('refuses a start at or after the subscription’s expiration, changing nothing', async () => {
      const f = fixture();
      const site = await setup(f);
      const { subscription } = await delayed(site, { expiresAt: '2026-03-20T00:00:00Z' });
      const before = await site.subscriptions.get(subscription.id);
      const error = await rejection(site.subscriptions.changeBillingDate(subscription.id, '2026-03-20T00:00:00Z'));
      expect([error.httpStatus, error.details?.[0]?.attribute]).toEqual([422, 'next_billing_at']);
      const after = await site.subscriptions.get(subscription.id);
      expect(after.subscription.version).toBe(before.subscription.version);
      await runTo(f, DELAYED_TO);
      expect((await site.subscriptions.get(subscription.id)).subscription.state).toBe('active');
    });
  });
}
