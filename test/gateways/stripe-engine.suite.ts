import { type BillingEngine, type BillingError, createBillingEngine, ManualClock, type Storage } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStripeGateway, type StripeGateway } from '../../gateways/stripe/index.js';
import { type FakeStripe, startFakeStripe } from '../support/fake-stripe/fake-stripe.js';

const TEST_KEY = 'sk_test_engineSuite';
const FULL_NUMBER = '4242424242424242';
const INTENTS = /^POST \/v1\/payment_intents$/;

interface Fixture {
  engine: BillingEngine;
  clock: ManualClock;
  storage: Storage;
  gateway: StripeGateway;
  fake: FakeStripe;
}

/**
 * The engine with the Stripe gateway, over the local fake of Stripe's API and the real `stripe`
 * client: signup, renewal, decline and dunning, a lost answer reconciled by key, refunds, and
 * card numbers kept off the wire.
 */
export function stripeEngineScenarios(harness: StorageHarness): void {
  describe(`engine with the Stripe gateway (${harness.name})`, () => {
    let current: Fixture | undefined;

    async function start(options: { allowRawCardsInTestMode?: boolean } = {}): Promise<Fixture> {
      const fake = await startFakeStripe();
      const storage = await harness.create();
      const clock = new ManualClock('2028-01-31T15:00:00Z');
      const gateway = createStripeGateway({
        apiKey: TEST_KEY,
        stripeConfig: { ...fake.stripeConfig, timeout: 5000 },
        clock,
        ...options,
      });
      const engine = createBillingEngine({ storage, clock, gateway });
      await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
      const acme = engine.site('acme');
      const family = await acme.catalog.createFamily({ name: 'Plans' });
      await acme.catalog.createProduct(family.id, {
        name: 'Basic',
        handle: 'basic',
        priceInCents: 1000,
        interval: 1,
        intervalUnit: 'month',
      });
      await acme.catalog.createProduct(family.id, {
        name: 'Trial',
        handle: 'trial',
        priceInCents: 1000,
        interval: 1,
        intervalUnit: 'month',
        trialInterval: 14,
        trialIntervalUnit: 'day',
        trialPriceInCents: 0,
        requireCreditCard: true,
      });
      current = { engine, clock, storage, gateway, fake };
      return current;
    }

    beforeEach(() => {
      current = undefined;
    });

    afterEach(async () => {
      const f = current;
      current = undefined;
      if (!f) return;
      expect(f.fake.drift).toEqual([]);
      await f.fake.close();
      await (harness.destroy ? harness.destroy(f.storage) : f.storage.close());
    });

    /** Signs up with a PaymentMethod attached through the gateway, as a merchant's server would. */
    async function signupWith(f: Fixture, paymentMethod: string, productHandle = 'basic') {
      const profile = await f.gateway.attachPaymentMethod(paymentMethod, { email: 'ada@example.com' });
      return f.engine.site('acme').subscriptions.create({
        productHandle,
        customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
        paymentProfile: {
          vaultToken: profile.vault_token,
          customerVaultToken: profile.customer_vault_token,
          currentVault: profile.current_vault,
          cardType: profile.card_type,
          lastFour: profile.last_four,
          expirationMonth: profile.expiration_month,
          expirationYear: profile.expiration_year,
        },
      });
    }

    const intentsFor = (f: Fixture, key: string) =>
      [...f.fake.paymentIntents.values()].filter((i) => i.metadata.billing_engine_key === `billing-engine:${key}`);

    it('signs up with a pm_ token, charges the first period at Stripe and renews a month later', async () => {
      const f = await start();
      const view = await signupWith(f, 'pm_card_visa');
      expect(view.subscription.state).toBe('active');
      expect(view.paymentProfile).toMatchObject({ currentVault: 'stripe_connect', cardType: 'visa', lastFour: '4242' });
      const signupIntents = [...f.fake.paymentIntents.values()];
      expect(signupIntents.map((i) => [i.amount, i.currency, i.status, i.customer])).toEqual([
        [1000, 'usd', 'succeeded', view.paymentProfile!.customerVaultToken],
      ]);
      f.clock.set('2028-03-01T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 1, errors: 0 });
      const renewal = intentsFor(f, `renewal:${view.subscription.id}:1`);
      expect(renewal.map((i) => [i.amount, i.status, i.payment_method])).toEqual([
        [1000, 'succeeded', view.paymentProfile!.vaultToken],
      ]);
      const lines = await f.engine.site('acme').subscriptions.transactions(view.subscription.id);
      expect(lines.filter((l) => l.type === 'payment').map((l) => l.gatewayTransactionId)).toEqual([
        signupIntents[0]!.id,
        renewal[0]!.id,
      ]);
      expect((await f.engine.site('acme').subscriptions.get(view.subscription.id)).balanceInCents).toBe(0);
    });

    it('charges an imported pm_ token without a Stripe customer by attaching it first', async () => {
      const f = await start();
      const view = await f.engine.site('acme').subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
        paymentProfile: {
          vaultToken: 'pm_card_visa',
          currentVault: 'stripe',
          expirationMonth: 12,
          expirationYear: 2034,
        },
      });
      expect(view.subscription.state).toBe('active');
      const [intent] = f.fake.paymentIntents.values();
      expect(intent).toMatchObject({ status: 'succeeded', amount: 1000 });
      expect(f.fake.customers.has(String(intent!.customer))).toBe(true);
    });

    it('refuses a signup whose card Stripe declines, with Stripe’s message, creating nothing', async () => {
      const f = await start();
      const error = (await f.engine
        .site('acme')
        .subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
          paymentProfile: {
            vaultToken: 'pm_card_chargeDeclined',
            currentVault: 'stripe_connect',
            expirationMonth: 12,
            expirationYear: 2034,
          },
        })
        .catch((e: unknown) => e)) as BillingError;
      expect(error.code).toBe('payment_declined');
      expect(error.message).toBe('Stripe: Your card was declined. (generic_decline)');
      expect(await f.engine.site('acme').customers.list()).toHaveLength(0);
    });

    it('sends a renewal Stripe declines into dunning, retries with new keys, and cancels at the end', async () => {
      const f = await start();
      const view = await signupWith(f, 'pm_card_chargeCustomerFail', 'trial');
      expect(view.subscription.state).toBe('trialing');
      expect(f.fake.paymentIntents.size).toBe(0);
      f.clock.set('2028-02-15T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ declined: 1, renewed: 0, errors: 0 });
      const pastDue = await f.engine.site('acme').subscriptions.get(view.subscription.id);
      expect(pastDue.subscription.state).toBe('past_due');
      expect(pastDue.balanceInCents).toBe(1000);
      f.clock.set('2028-02-20T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ declined: 3, recovered: 0, errors: 0 });
      const cancelled = await f.engine.site('acme').subscriptions.get(view.subscription.id);
      expect(cancelled.subscription).toMatchObject({ state: 'cancelled', cancellationMethod: 'dunning' });
      const keys = [...f.fake.paymentIntents.values()].map((i) => i.metadata.billing_engine_purpose);
      expect(keys).toEqual(['renewal', 'dunning', 'dunning', 'dunning']);
      expect([...f.fake.paymentIntents.values()].every((i) => i.status === 'requires_payment_method')).toBe(true);
    });

    it('reconciles a renewal whose answer was lost by key, without a second PaymentIntent', async () => {
      const f = await start();
      const view = await signupWith(f, 'pm_card_visa');
      // Search lags at Stripe: the engine's immediate lookup cannot tell yet, so the outcome stays unknown.
      f.fake.pauseSearchIndexing();
      f.fake.dropAfterExecuting({ route: INTENTS, times: 10 });
      f.clock.set('2028-03-01T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 0 });
      const key = `renewal:${view.subscription.id}:1`;
      expect(intentsFor(f, key)).toHaveLength(1);
      expect((await f.engine.site('acme').subscriptions.get(view.subscription.id)).balanceInCents).toBe(1000);
      f.fake.indexSearch();
      f.clock.set('2028-03-01T02:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 1, errors: 0 });
      const settled = await f.engine.site('acme').subscriptions.get(view.subscription.id);
      expect(settled.balanceInCents).toBe(0);
      expect(intentsFor(f, key)).toHaveLength(1);
      const payments = (await f.engine.site('acme').subscriptions.transactions(view.subscription.id)).filter(
        (l) => l.type === 'payment',
      );
      expect(payments.at(-1)?.gatewayTransactionId).toBe(intentsFor(f, key)[0]!.id);
    });

    it('completes a signup whose answer was lost, with the one PaymentIntent Stripe made', async () => {
      const f = await start();
      f.fake.dropAfterExecuting({ route: INTENTS, times: 10 });
      const view = await signupWith(f, 'pm_card_visa');
      expect(view.subscription.state).toBe('active');
      expect(f.fake.paymentIntents.size).toBe(1);
      expect(f.fake.requests.filter((r) => r.path === '/v1/payment_intents').length).toBeGreaterThan(1);
    });

    it('refunds part of a payment and then the rest through Stripe', async () => {
      const f = await start();
      const view = await signupWith(f, 'pm_card_visa');
      const acme = f.engine.site('acme');
      const payment = (await acme.subscriptions.transactions(view.subscription.id)).find((l) => l.type === 'payment')!;
      await acme.ledger.refund(view.subscription.id, { paymentId: payment.id, amountInCents: 400, memo: 'Part' });
      await acme.ledger.refund(view.subscription.id, { paymentId: payment.id, memo: 'Rest' });
      expect([...f.fake.refunds.values()].map((r) => [r.payment_intent, r.amount])).toEqual([
        [payment.gatewayTransactionId, 400],
        [payment.gatewayTransactionId, 600],
      ]);
      const refunds = (await acme.subscriptions.transactions(view.subscription.id)).filter((l) => l.type === 'refund');
      expect(refunds.map((l) => [l.amountInCents, l.gatewayTransactionId])).toEqual(
        [...f.fake.refunds.values()].map((r) => [r.amount, r.id]),
      );
    });

    it('refuses an import whose current_vault names another gateway, before anything is written or sent', async () => {
      const f = await start();
      const acme = f.engine.site('acme');
      const error = (await acme.subscriptions
        .create({
          productHandle: 'basic',
          customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
          paymentProfile: {
            vaultToken: 'bt_token_1',
            currentVault: 'braintree_blue',
            expirationMonth: 12,
            expirationYear: 2034,
          },
        })
        .catch((e: unknown) => e)) as BillingError;
      expect(error.code).toBe('validation');
      expect(error.details).toEqual([
        {
          message:
            'Current vault: braintree_blue is not the gateway of this server (stripe_connect); import a token of stripe_connect or stripe.',
          attribute: 'payment_profile.current_vault',
        },
      ]);
      expect(f.fake.requests).toHaveLength(0);
      expect(await acme.customers.list()).toHaveLength(0);
      expect(await acme.subscriptions.list()).toHaveLength(0);

      // The same refusal for a payment profile created on its own.
      const customer = await acme.customers.create({ firstName: 'Bo', lastName: 'B', email: 'bo@example.com' });
      const profile = (await acme.paymentProfiles
        .create({
          customerId: customer.id,
          vaultToken: 'bt_token_2',
          currentVault: 'braintree_blue',
          expirationMonth: 12,
          expirationYear: 2034,
        })
        .catch((e: unknown) => e)) as BillingError;
      expect(profile.code).toBe('validation');
      expect(profile.details.map((d) => d.attribute)).toEqual(['payment_profile.current_vault']);
      expect(await acme.paymentProfiles.list({ customerId: customer.id })).toHaveLength(0);
      expect(f.fake.requests).toHaveLength(0);
    });

    it('takes a PaymentMethod id as the new card of a subscription and charges it at renewal', async () => {
      const f = await start();
      const acme = f.engine.site('acme');
      const view = await signupWith(f, 'pm_card_visa');
      const id = view.subscription.id;
      const updated = await acme.subscriptions.update(id, {
        creditCard: { fullNumber: 'pm_card_mastercard', expirationMonth: 11, expirationYear: 2035 },
      });
      // Stripe attaches a test PaymentMethod as a new one of its own (as the real API does).
      expect(updated.paymentProfile!.vaultToken).toMatch(/^pm_/);
      expect(updated.paymentProfile!.vaultToken).not.toBe(view.paymentProfile!.vaultToken);
      expect(updated.paymentProfile).toMatchObject({
        currentVault: 'stripe_connect',
        cardType: 'master',
        lastFour: '4444',
        expirationMonth: 11,
        expirationYear: 2035,
      });
      expect(updated.paymentProfile!.id).not.toBe(view.paymentProfile!.id);
      // The new card joins the payer's Stripe Customer: one Customer keeps all of a payer's cards.
      expect(updated.paymentProfile!.customerVaultToken).toBe(view.paymentProfile!.customerVaultToken);
      f.clock.set('2028-03-01T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 1, errors: 0 });
      const renewal = intentsFor(f, `renewal:${id}:1`);
      expect(renewal.map((i) => [i.amount, i.status, i.payment_method])).toEqual([
        [1000, 'succeeded', updated.paymentProfile!.vaultToken],
      ]);

      // The card-update command and the payment profile update take one too.
      const again = await acme.subscriptions.updateCard(id, {
        fullNumber: 'pm_card_amex',
        expirationMonth: 10,
        expirationYear: 2036,
      });
      expect(again.paymentProfile).toMatchObject({ cardType: 'american_express', expirationYear: 2036 });
      expect(again.paymentProfile!.customerVaultToken).toBe(view.paymentProfile!.customerVaultToken);
      const profile = await acme.paymentProfiles.update(again.paymentProfile!.id, {
        fullNumber: 'pm_card_chargeCustomerFail',
        expirationMonth: 9,
        expirationYear: 2037,
      });
      expect(profile).toMatchObject({ cardType: 'visa', lastFour: '0341', expirationMonth: 9, expirationYear: 2037 });
      expect(profile.vaultToken).toMatch(/^pm_/);
      expect(profile.vaultToken).not.toBe(again.paymentProfile!.vaultToken);
      expect(profile.customerVaultToken).toBe(view.paymentProfile!.customerVaultToken);
      expect(f.fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/customers')).toHaveLength(1);
      // A number is still refused without raw cards, and never sent.
      const refused = (await acme.subscriptions
        .updateCard(id, { fullNumber: FULL_NUMBER, expirationMonth: 10, expirationYear: 2036 })
        .catch((e: unknown) => e)) as BillingError;
      expect(refused.code).toBe('validation');
      expect(f.fake.requests.some((r) => r.body.includes(FULL_NUMBER))).toBe(false);
    });

    it('never sends a full card number to Stripe unless raw cards are enabled in test mode', async () => {
      const f = await start();
      const card = { fullNumber: FULL_NUMBER, expirationMonth: 12, expirationYear: 2034 };
      const customer = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };
      const acme = f.engine.site('acme');
      const refused = (await acme.subscriptions
        .create({ productHandle: 'basic', customer, creditCard: card })
        .catch((e: unknown) => e)) as BillingError;
      expect(refused.code).toBe('validation');
      expect(refused.message).toContain('pm_');
      expect(refused.message).not.toContain(FULL_NUMBER);
      expect(f.fake.requests.some((r) => r.body.includes(FULL_NUMBER) || r.path.includes(FULL_NUMBER))).toBe(false);

      const raw = await start({ allowRawCardsInTestMode: true });
      const view = await raw.engine
        .site('acme')
        .subscriptions.create({ productHandle: 'basic', customer, creditCard: card });
      expect(view.paymentProfile).toMatchObject({ lastFour: '4242', cardType: 'visa' });
      expect(view.paymentProfile!.vaultToken).toMatch(/^pm_/);
      expect(raw.fake.requests.filter((r) => r.body.includes(FULL_NUMBER))).toHaveLength(1);
      await f.fake.close();
      await (harness.destroy ? harness.destroy(f.storage) : f.storage.close());
    });
  });
}
