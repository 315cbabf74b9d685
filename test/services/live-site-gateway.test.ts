/**
 * No silent test gateway: an engine built without a `gateway` option charges test sites through
 * the built-in test gateway, and refuses every payment on a live site (naming the option) before
 * a gateway is called, keeping nothing of the refused command.
 */
import {
  type BillingEngine,
  BillingError,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type Storage,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { beforeEach, describe, expect, it } from 'vitest';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const CUSTOMER = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

async function siteWithPlan(engine: BillingEngine, subdomain: string, mode: 'test' | 'live') {
  await engine.sites.create({ subdomain, currency: 'USD', timeZone: 'UTC', mode });
  const site = engine.site(subdomain);
  const family = await site.catalog.createFamily({ name: 'Plans' });
  await site.catalog.createProduct(family.id, {
    name: 'Pro',
    handle: 'pro',
    priceInCents: 2500,
    interval: 1,
    intervalUnit: 'month',
  });
  return site;
}

async function refusal(promise: Promise<unknown>): Promise<BillingError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(BillingError);
  return error as BillingError;
}

describe('an engine without a gateway option', () => {
  let storage: Storage;
  let clock: ManualClock;
  let engine: BillingEngine;

  beforeEach(async () => {
    storage = createMemoryStorage();
    clock = new ManualClock('2026-03-01T12:00:00Z');
    engine = createBillingEngine({ storage, clock });
    await engine.migrate();
  });

  it('charges a test site through the built-in test gateway', async () => {
    const site = await siteWithPlan(engine, 'sandbox', 'test');
    const created = await site.subscriptions.create({ productHandle: 'pro', customer: CUSTOMER, creditCard: VISA });
    expect(created.subscription.state).toBe('active');
    expect(engine.gateway.name).toBe(createTestGateway().name);
  });

  it('refuses a signup that charges on a live site, naming the gateway option, and keeps nothing', async () => {
    const site = await siteWithPlan(engine, 'shop', 'live');
    const error = await refusal(
      site.subscriptions.create({ productHandle: 'pro', customer: CUSTOMER, creditCard: VISA }),
    );
    expect(error.code).toBe('gateway_error');
    expect(error.message).toMatch(/live.*pass the gateway option to createBillingEngine/);
    expect(await site.subscriptions.list()).toHaveLength(0);
    expect(await site.customers.list()).toHaveLength(0);
  });

  it('refuses a live site renewal with no charge and no new period', async () => {
    // The live site and its subscription are made by an engine that has a gateway, then the
    // application restarts without one.
    const charges: number[] = [];
    const configured = createTestGateway();
    const withGateway = createBillingEngine({
      storage,
      clock,
      gateway: {
        ...configured,
        name: configured.name,
        supportsRefunds: configured.supportsRefunds,
        tokenize: (card) => configured.tokenize(card),
        lookup: (key) => configured.lookup(key),
        refund: (request) => configured.refund(request),
        charge: (request) => {
          charges.push(request.amountInCents);
          return configured.charge(request);
        },
      },
    });
    const site = await siteWithPlan(withGateway, 'shop', 'live');
    const { subscription } = await site.subscriptions.create({
      productHandle: 'pro',
      customer: CUSTOMER,
      creditCard: VISA,
    });
    expect(charges).toEqual([2500]);

    clock.set('2026-04-01T12:00:01Z');
    const summary = await engine.runDue();
    expect(summary.renewed).toBe(0);
    expect(charges).toEqual([2500]);
    expect((await engine.site('shop').subscriptions.get(subscription.id)).subscription.periodIndex).toBe(
      subscription.periodIndex,
    );
    const oneTime = await refusal(
      engine.site('shop').ledger.charge(subscription.id, { amountInCents: 100, memo: 'Setup' }),
    );
    expect(oneTime.message).toMatch(/pass the gateway option/);
  });

  it('charges a live site once a gateway is given', async () => {
    const withGateway = createBillingEngine({ storage, clock, gateway: createTestGateway() });
    const site = await siteWithPlan(withGateway, 'shop', 'live');
    const created = await site.subscriptions.create({ productHandle: 'pro', customer: CUSTOMER, creditCard: VISA });
    expect(created.subscription.state).toBe('active');
  });
});
