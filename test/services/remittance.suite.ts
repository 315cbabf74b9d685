import type { BillingEvent } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const CUSTOMER = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const site = f.engine.site('acme');
  const family = await site.catalog.createFamily({ name: 'Plans' });
  for (const [handle, priceInCents] of [
    ['basic', 1000],
    ['pro', 3000],
  ] as const) {
    await site.catalog.createProduct(family.id, {
      name: handle,
      handle,
      priceInCents,
      interval: 1,
      intervalUnit: 'month',
    });
  }
  await site.catalog.createProduct(family.id, {
    name: 'Trial plan',
    handle: 'trial',
    priceInCents: 2000,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
  });
  const events: BillingEvent[] = [];
  f.engine.on('*', (event) => events.push(event));
  return { site, events };
}

/** Advances the clock by whole months, running due work after each, like a year of a worker. */
async function months(f: EngineFixture, count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    const next = new Date(f.clock.now());
    next.setUTCMonth(next.getUTCMonth() + 1);
    f.clock.set(next);
    await f.engine.runDue();
  }
}

/** Remittance collection: invoices issued and left open; the engine never charges or duns. */
export function remittanceSuite(harness: StorageHarness): void {
  describe(`remittance collection (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-01-15T12:00:00Z');

    it('signs up without a card and renews a year into 12 open invoices, taking no money', async () => {
      const f = fixture();
      const { site, events } = await setup(f);
      const view = await site.subscriptions.create({
        productHandle: 'basic',
        customer: CUSTOMER,
        paymentCollectionMethod: 'remittance',
      });
      const id = view.subscription.id;
      expect(view.subscription.paymentCollectionMethod).toBe('remittance');
      expect(view.subscription.state).toBe('active');
      expect(view.paymentProfile).toBeNull();
      await months(f, 12);

      expect(f.gateway.chargeCalls).toBe(0);
      expect(f.gateway.charges.size).toBe(0);
      const { invoices } = await site.invoices.list({ subscriptionId: id, perPage: 50 });
      // The signup's invoice and one per renewal, every one open and owing its period's price.
      expect(invoices).toHaveLength(13);
      expect(invoices.every((invoice) => invoice.status === 'open')).toBe(true);
      const after = await site.subscriptions.get(id);
      expect(after.subscription.state).toBe('active');
      expect(after.subscription.periodIndex).toBe(12);
      expect(after.balanceInCents).toBe(13 * 1000);
      const lines = await site.subscriptions.transactions(id);
      expect(lines.filter((l) => l.type === 'payment')).toHaveLength(0);
      expect(lines.filter((l) => l.type === 'charge')).toHaveLength(13);
      const keys = events.filter((e) => e.subjectId === id).map((e) => e.key);
      expect(keys.filter((k) => k === 'renewal_success')).toHaveLength(12);
      for (const never of ['payment_failure', 'renewal_failure', 'dunning_step_reached'] as const)
        expect(keys).not.toContain(never);
    });

    it('lets the customer pay an open invoice outside the gateway', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const view = await site.subscriptions.create({
        productHandle: 'basic',
        customer: CUSTOMER,
        paymentCollectionMethod: 'remittance',
      });
      const [invoice] = (await site.invoices.list({ subscriptionId: view.subscription.id })).invoices;
      const paid = await site.invoices.recordPayment(invoice!.uid, { amountInCents: 1000, method: 'external' });
      expect(paid.status).toBe('paid');
      expect((await site.subscriptions.get(view.subscription.id)).balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(0);
    });

    it('reads the older name invoice as remittance', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const view = await site.subscriptions.create({
        productHandle: 'basic',
        customer: CUSTOMER,
        paymentCollectionMethod: 'invoice',
      });
      expect(view.subscription.paymentCollectionMethod).toBe('remittance');
      expect(f.gateway.chargeCalls).toBe(0);
    });

    it('does not charge a remittance subscription with a card on file', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const view = await site.subscriptions.create({
        productHandle: 'basic',
        customer: CUSTOMER,
        creditCard: VISA,
        paymentCollectionMethod: 'remittance',
      });
      expect(view.paymentProfile).not.toBeNull();
      await months(f, 2);
      expect(f.gateway.chargeCalls).toBe(0);
      expect((await site.subscriptions.get(view.subscription.id)).balanceInCents).toBe(3000);
    });

    it('refuses a collection method it does not know, or prepaid without its configuration, before anything is written', async () => {
      const f = fixture();
      const { site } = await setup(f);
      for (const [method, message, attribute] of [
        [
          'cheque',
          'Payment collection method: must be one of automatic, remittance or invoice.',
          'payment_collection_method',
        ],
        [
          'prepaid',
          'Initial funding amount in cents: must be greater than 0.',
          'prepaid_configuration.initial_funding_amount_in_cents',
        ],
      ] as const) {
        const error = await rejection(
          site.subscriptions.create({
            productHandle: 'basic',
            customer: CUSTOMER,
            creditCard: VISA,
            paymentCollectionMethod: method,
          }),
        );
        expect(error.code).toBe('validation');
        expect(error.details).toContainEqual({ message, attribute });
      }
      expect(f.gateway.chargeCalls).toBe(0);
      expect(await site.subscriptions.list()).toHaveLength(0);
      expect(await site.customers.list()).toHaveLength(0);
    });

    it('still needs a card for an automatic signup that charges', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const error = await rejection(site.subscriptions.create({ productHandle: 'basic', customer: CUSTOMER }));
      expect(error.code).toBe('validation');
      expect(await site.subscriptions.list()).toHaveLength(0);
    });

    it('switches mid-life: automatic renewals charge, remittance ones leave invoices open, back again collects', async () => {
      const f = fixture();
      const { site, events } = await setup(f);
      const view = await site.subscriptions.create({ productHandle: 'basic', customer: CUSTOMER, creditCard: VISA });
      const id = view.subscription.id;
      expect(view.subscription.paymentCollectionMethod).toBe('automatic');
      await months(f, 2);
      expect(f.gateway.chargeCalls).toBe(3);

      const remittance = await site.subscriptions.update(id, { paymentCollectionMethod: 'remittance' });
      expect(remittance.subscription.paymentCollectionMethod).toBe('remittance');
      await months(f, 3);
      expect(f.gateway.chargeCalls).toBe(3);
      const open = (await site.invoices.list({ subscriptionId: id, status: 'open' })).invoices;
      expect(open).toHaveLength(3);
      expect((await site.subscriptions.get(id)).balanceInCents).toBe(3000);

      const automatic = await site.subscriptions.update(id, { paymentCollectionMethod: 'automatic' });
      expect(automatic.subscription.paymentCollectionMethod).toBe('automatic');
      // Switching back charges nothing at once; the next renewal collects everything then owed.
      expect(f.gateway.chargeCalls).toBe(3);
      await months(f, 1);
      expect(f.gateway.chargeCalls).toBe(4);
      const charged = [...f.gateway.charges.values()].map((c) => c.amountInCents);
      expect(charged.at(-1)).toBe(4000);
      const after = await site.subscriptions.get(id);
      expect(after.balanceInCents).toBe(0);
      expect(after.subscription.state).toBe('active');
      expect((await site.invoices.list({ subscriptionId: id, status: 'open' })).invoices).toHaveLength(0);
      expect(events.map((e) => e.key)).not.toContain('dunning_step_reached');
    });

    it('refuses a switch to automatic without a payment profile and keeps remittance', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const view = await site.subscriptions.create({
        productHandle: 'basic',
        customer: CUSTOMER,
        paymentCollectionMethod: 'remittance',
      });
      const id = view.subscription.id;
      const error = await rejection(site.subscriptions.update(id, { paymentCollectionMethod: 'automatic' }));
      expect(error.code).toBe('validation');
      expect(error.details).toEqual([
        {
          message: 'Payment collection method: automatic collection needs a payment profile; add a card first.',
          attribute: 'payment_collection_method',
        },
      ]);
      const unchanged = await site.subscriptions.get(id);
      expect(unchanged.subscription.paymentCollectionMethod).toBe('remittance');
      expect(unchanged.subscription.version).toBe(view.subscription.version);

      const bad = await rejection(site.subscriptions.update(id, { paymentCollectionMethod: 'cash' }));
      expect(bad.code).toBe('validation');

      // A card given in the same update is on file by the time the method changes.
      const switched = await site.subscriptions.update(id, {
        creditCard: VISA,
        paymentCollectionMethod: 'automatic',
      });
      expect(switched.subscription.paymentCollectionMethod).toBe('automatic');
      expect(switched.paymentProfile?.lastFour).toBe('1111');
    });

    it('invoices one-time charges and migrations of a remittance subscription without charging', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const view = await site.subscriptions.create({
        productHandle: 'basic',
        customer: CUSTOMER,
        creditCard: VISA,
        paymentCollectionMethod: 'remittance',
      });
      const id = view.subscription.id;
      const charge = await site.ledger.charge(id, { amountInCents: 2500, memo: 'Consulting' });
      expect(charge.type).toBe('charge');
      expect(charge.amountInCents).toBe(2500);
      const migrated = await site.subscriptions.migrate(id, { productHandle: 'pro' });
      expect(migrated.product.product.handle).toBe('pro');
      expect(f.gateway.chargeCalls).toBe(0);
      const lines = await site.subscriptions.transactions(id);
      expect(lines.filter((l) => l.type === 'payment')).toHaveLength(0);
      const open = (await site.invoices.list({ subscriptionId: id, status: 'open' })).invoices;
      expect(open.length).toBeGreaterThanOrEqual(3);
      expect(migrated.balanceInCents).toBeGreaterThan(1000 + 2500);
    });

    it('invoices an allocation charged at once without charging a remittance subscription', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const family = (await site.catalog.listFamilies())[0]!;
      const seats = await site.components.create(family.id, {
        name: 'Seats',
        kind: 'quantity_based',
        unitName: 'seat',
        handle: 'seats',
        unitPrice: '9',
      });
      const view = await site.subscriptions.create({
        productHandle: 'basic',
        customer: CUSTOMER,
        creditCard: VISA,
        paymentCollectionMethod: 'remittance',
      });
      const id = view.subscription.id;
      await site.allocations.allocate(id, seats.component.id, {
        quantity: 5,
        upgradeCharge: 'full',
        accrueCharge: false,
      });
      expect(f.gateway.chargeCalls).toBe(0);
      expect((await site.subscriptions.get(id)).balanceInCents).toBe(1000 + 4500);
      const lines = await site.subscriptions.transactions(id);
      expect(lines.filter((l) => l.type === 'payment')).toHaveLength(0);
    });

    it('ends a trial without a card into an active period whose invoice stays open', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const view = await site.subscriptions.create({
        productHandle: 'trial',
        customer: CUSTOMER,
        paymentCollectionMethod: 'remittance',
      });
      expect(view.subscription.state).toBe('trialing');
      await months(f, 1);
      const after = await site.subscriptions.get(view.subscription.id);
      expect(after.subscription.state).toBe('active');
      expect(after.balanceInCents).toBe(2000);
      expect(f.gateway.chargeCalls).toBe(0);
    });

    it('ends dunning when a past-due subscription switches to remittance', async () => {
      const f = fixture();
      const { site, events } = await setup(f);
      const view = await site.subscriptions.create({ productHandle: 'basic', customer: CUSTOMER, creditCard: VISA });
      const id = view.subscription.id;
      f.gateway.injectFailure({ outcome: 'declined', times: 1 });
      await months(f, 1);
      expect((await site.subscriptions.get(id)).subscription.state).toBe('past_due');
      const calls = f.gateway.chargeCalls;
      const steps = events.filter((e) => e.key === 'dunning_step_reached').length;
      await site.subscriptions.update(id, { paymentCollectionMethod: 'remittance' });
      // Past every retry the site's dunning would have made: none is made.
      f.clock.set(new Date(f.clock.now().getTime() + 20 * 86_400_000));
      await f.engine.runDue();
      expect(f.gateway.chargeCalls).toBe(calls);
      expect(events.filter((e) => e.key === 'dunning_step_reached')).toHaveLength(steps);
      const after = await site.subscriptions.get(id);
      expect(after.subscription.state).toBe('past_due');
      expect(after.balanceInCents).toBe(1000);
      // The customer pays the open invoice outside the gateway: the subscription is settled.
      await site.ledger.recordExternalPayment(id, { amountInCents: 1000, memo: 'Wire transfer' });
      const paid = await site.subscriptions.get(id);
      expect(paid.subscription.state).toBe('active');
      expect(paid.balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(calls);
    });
  });
}
