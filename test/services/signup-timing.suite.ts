import { createBillingEngine } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

/**
 * Signup timing and payment (issue #19): `payment_profile_id` (an existing profile of the
 * customer pays), `initial_billing_at` (a delayed signup, awaiting until due work starts it) and
 * `expires_at` (the subscription expires at that instant).
 */

const START = '2026-03-02T10:00:00Z';
const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const DECLINED = { fullNumber: '2', expirationMonth: 12, expirationYear: 2030 };
const ADA = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

const at = (iso: string) => new Date(iso);

async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
    initialChargeInCents: 500,
  });
  await acme.catalog.createProduct(family.id, {
    name: 'Trial',
    handle: 'trial',
    priceInCents: 2000,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 100,
  });
  return acme;
}

type Acme = Awaited<ReturnType<typeof setup>>;

/** The instant most tests delay a signup to. */
const DELAYED_TO = '2026-03-05T00:00:00Z';

/** Ada's signup to `basic` with a card, delayed to {@link DELAYED_TO}; `extra` replaces any of it. */
function delayedBasic(acme: Acme, extra: Record<string, unknown> = {}) {
  return acme.subscriptions.create({
    productHandle: 'basic',
    customer: ADA,
    creditCard: VISA,
    initialBillingAt: DELAYED_TO,
    ...extra,
  });
}

async function lines(acme: Acme, id: number) {
  return (await acme.subscriptions.transactions(id)).map((t) => ({
    type: t.type,
    kind: t.kind,
    amountInCents: t.amountInCents,
    at: t.createdAt.toISOString(),
  }));
}

async function eventKeys(acme: Acme, id: number): Promise<string[]> {
  return (await acme.events.listForSubscription(id, { perPage: 200 })).map((e) => e.event.key);
}

/** Signup timing fields on the engine, on every storage. */
export function signupTimingSuite(harness: StorageHarness): void {
  describe(`signup timing: initial_billing_at, expires_at, payment_profile_id (${harness.name})`, () => {
    const fixture = useEngine(harness, START);

    it('a delayed signup waits without charging, then due work starts it with the signup charges', async () => {
      const f = fixture();
      const acme = await setup(f);
      const view = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: ADA,
        creditCard: VISA,
        initialBillingAt: '2026-03-20T08:00:00Z',
      });
      const id = view.subscription.id;
      expect(view.subscription).toMatchObject({
        state: 'awaiting_signup',
        activatedAt: null,
        nextAssessmentAt: at('2026-03-20T08:00:00Z'),
        currentPeriodEndsAt: at('2026-03-20T08:00:00Z'),
        signupRevenueInCents: 0,
      });
      expect(view.paymentProfile).not.toBeNull();
      expect(f.gateway.chargeCalls).toBe(0);
      expect(await lines(acme, id)).toEqual([]);
      expect((await acme.invoices.list({ subscriptionId: id })).invoices).toHaveLength(0);

      // Nothing before the instant.
      f.clock.set('2026-03-20T07:59:59Z');
      await f.engine.runDue();
      expect((await acme.subscriptions.get(id)).subscription.state).toBe('awaiting_signup');
      expect(f.gateway.chargeCalls).toBe(0);

      f.clock.set('2026-03-20T08:00:00Z');
      const summary = await f.engine.runDue();
      expect(summary.renewed).toBe(1);
      const started = await acme.subscriptions.get(id);
      expect(started.subscription).toMatchObject({
        state: 'active',
        periodIndex: 0,
        activatedAt: at('2026-03-20T08:00:00Z'),
        currentPeriodStartedAt: at('2026-03-20T08:00:00Z'),
        currentPeriodEndsAt: at('2026-04-20T08:00:00Z'),
        nextAssessmentAt: at('2026-04-20T08:00:00Z'),
      });
      expect(started.balanceInCents).toBe(0);
      expect(started.subscription.signupPaymentId).not.toBeNull();
      expect(f.gateway.chargeCalls).toBe(1);
      expect(await lines(acme, id)).toEqual([
        { type: 'charge', kind: 'baseline', amountInCents: 1000, at: '2026-03-20T08:00:00.000Z' },
        { type: 'charge', kind: 'initial', amountInCents: 500, at: '2026-03-20T08:00:00.000Z' },
        { type: 'payment', kind: null, amountInCents: 1500, at: '2026-03-20T08:00:00.000Z' },
      ]);
      const { invoices } = await acme.invoices.list({ subscriptionId: id });
      expect(invoices.map((i) => [i.status, i.totalInCents])).toEqual([['paid', 1500]]);
      const keys = await eventKeys(acme, id);
      expect(keys).toContain('signup_success');
      expect(keys).toContain('subscription_state_change');
      expect(keys).toContain('payment_success');

      // The next period renews a month after the start.
      f.clock.set('2026-04-20T08:00:00Z');
      await f.engine.runDue();
      expect(f.gateway.chargeCalls).toBe(2);
      expect((await acme.subscriptions.get(id)).subscription.currentPeriodEndsAt).toEqual(at('2026-05-20T08:00:00Z'));
    });

    it('a delayed signup of a product with a trial starts trialing at the instant, then renews after the trial', async () => {
      const f = fixture();
      const acme = await setup(f);
      const view = await acme.subscriptions.create({
        productHandle: 'trial',
        customer: ADA,
        creditCard: VISA,
        initialBillingAt: '2026-03-10T00:00:00Z',
      });
      const id = view.subscription.id;
      expect(view.subscription).toMatchObject({ state: 'awaiting_signup', trialStartedAt: null, trialEndedAt: null });
      f.clock.set('2026-03-10T00:00:00Z');
      await f.engine.runDue();
      expect((await acme.subscriptions.get(id)).subscription).toMatchObject({
        state: 'trialing',
        periodIndex: -1,
        trialStartedAt: at('2026-03-10T00:00:00Z'),
        trialEndedAt: at('2026-03-24T00:00:00Z'),
        currentPeriodStartedAt: at('2026-03-10T00:00:00Z'),
        currentPeriodEndsAt: at('2026-03-24T00:00:00Z'),
        activatedAt: null,
      });
      expect(await lines(acme, id)).toEqual([
        { type: 'charge', kind: 'trial', amountInCents: 100, at: '2026-03-10T00:00:00.000Z' },
        { type: 'payment', kind: null, amountInCents: 100, at: '2026-03-10T00:00:00.000Z' },
      ]);
      f.clock.set('2026-03-24T00:00:00Z');
      await f.engine.runDue();
      const active = await acme.subscriptions.get(id);
      expect(active.subscription).toMatchObject({
        state: 'active',
        periodIndex: 0,
        currentPeriodEndsAt: at('2026-04-24T00:00:00Z'),
      });
      expect(active.balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(2);
    });

    it('a declined first payment cancels the delayed signup and leaves nothing owed', async () => {
      const f = fixture();
      const acme = await setup(f);
      const view = await delayedBasic(acme, { creditCard: DECLINED });
      const id = view.subscription.id;
      f.clock.set('2026-03-05T00:00:00Z');
      const summary = await f.engine.runDue();
      expect(summary.declined).toBe(1);
      const failed = await acme.subscriptions.get(id);
      expect(failed.subscription).toMatchObject({
        state: 'cancelled',
        cancellationMethod: 'dunning',
        canceledAt: at('2026-03-05T00:00:00Z'),
        nextAssessmentAt: null,
      });
      expect(failed.subscription.data.pendingStart).toBeUndefined();
      expect(failed.balanceInCents).toBe(0);
      expect(await lines(acme, id)).toEqual([]);
      expect(await eventKeys(acme, id)).toEqual(expect.arrayContaining(['signup_failure', 'payment_failure']));
      // No retries, no renewals.
      const calls = f.gateway.chargeCalls;
      f.clock.set('2026-06-05T00:00:00Z');
      await f.engine.runDue();
      expect(f.gateway.chargeCalls).toBe(calls);
      expect((await acme.subscriptions.get(id)).subscription.state).toBe('cancelled');
    });

    it('a delayed signup can be canceled while awaiting: nothing is ever charged', async () => {
      const f = fixture();
      const acme = await setup(f);
      const view = await delayedBasic(acme);
      const canceled = await acme.subscriptions.cancel(view.subscription.id, { cancellationMessage: 'changed mind' });
      expect(canceled.subscription).toMatchObject({ state: 'cancelled', cancellationMessage: 'changed mind' });
      f.clock.set('2026-05-05T00:00:00Z');
      await f.engine.runDue();
      expect(f.gateway.chargeCalls).toBe(0);
      expect((await acme.subscriptions.get(view.subscription.id)).subscription.state).toBe('cancelled');
      expect(await lines(acme, view.subscription.id)).toEqual([]);
    });

    it('two workers starting one delayed signup charge it once', async () => {
      const f = fixture();
      const acme = await setup(f);
      const ids: number[] = [];
      for (let n = 0; n < 3; n++) {
        const view = await delayedBasic(acme, { customer: { ...ADA, email: `ada${n}@example.com` } });
        ids.push(view.subscription.id);
      }
      const other = createBillingEngine({ storage: f.storage, clock: f.clock, gateway: f.gateway });
      f.clock.set('2026-03-05T00:00:00Z');
      await Promise.all([f.engine.runDue({ concurrency: 2 }), other.runDue({ concurrency: 2 })]);
      expect(f.gateway.chargeCalls).toBe(3);
      for (const id of ids) {
        const view = await acme.subscriptions.get(id);
        expect(view.subscription.state).toBe('active');
        expect(view.balanceInCents).toBe(0);
        const payments = (await lines(acme, id)).filter((l) => l.type === 'payment');
        expect(payments).toEqual([
          { type: 'payment', kind: null, amountInCents: 1500, at: '2026-03-05T00:00:00.000Z' },
        ]);
        expect([...f.gateway.charges.keys()].filter((k) => k === `delayed_signup:${id}`)).toHaveLength(1);
      }
      // Running again changes nothing.
      await Promise.all([f.engine.runDue(), other.runDue()]);
      expect(f.gateway.chargeCalls).toBe(3);
    });

    it('a start whose payment answer is lost is looked up by key later and charged once', async () => {
      const f = fixture();
      const acme = await setup(f);
      const view = await delayedBasic(acme);
      const id = view.subscription.id;
      // The gateway takes the money but the answer is lost.
      f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'delayed_signup:', charged: true });
      f.clock.set('2026-03-05T00:00:00Z');
      await f.engine.runDue();
      const waiting = await acme.subscriptions.get(id);
      expect(waiting.subscription.state).toBe('awaiting_signup');
      expect(waiting.subscription.data.pendingStart).toBeDefined();
      expect(await lines(acme, id)).toEqual([]);
      f.clock.set('2026-03-05T01:00:00Z');
      await f.engine.runDue();
      const started = await acme.subscriptions.get(id);
      expect(started.subscription.state).toBe('active');
      expect(started.subscription.data.pendingStart).toBeUndefined();
      expect(started.balanceInCents).toBe(0);
      expect((await lines(acme, id)).filter((l) => l.type === 'payment')).toHaveLength(1);
      expect([...f.gateway.charges.keys()]).toEqual([`delayed_signup:${id}`]);
    });

    it('refuses to cancel a delayed signup while its first charge is in flight; the start completes', async () => {
      const f = fixture();
      const acme = await setup(f);
      const view = await delayedBasic(acme);
      const id = view.subscription.id;
      // The merchant tries to cancel between the committed attempt and the gateway's answer.
      const refusals: string[] = [];
      const gateway = new Proxy(f.gateway, {
        get(target, property) {
          if (property === 'charge')
            return async (...args: Parameters<typeof target.charge>) => {
              const error = await rejection(acme.subscriptions.cancel(id));
              refusals.push(`${error.code}: ${error.message}`);
              return target.charge(...args);
            };
          const value = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const racing = createBillingEngine({ storage: f.storage, clock: f.clock, gateway });
      f.clock.set('2026-03-05T00:00:00Z');
      await racing.runDue();
      expect(refusals).toEqual([
        'validation: The first payment of this subscription is in progress; it was not canceled. Try again when it has finished.',
      ]);
      const after = await acme.subscriptions.get(id);
      expect(after.subscription.state).toBe('active');
      expect(after.subscription.data.pendingStart).toBeUndefined();
      expect(after.balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(1);
      // Once it has finished, the cancel goes through.
      expect((await acme.subscriptions.cancel(id)).subscription.state).toBe('cancelled');
    });

    it('a delayed remittance signup issues its signup invoice at the start and leaves it open', async () => {
      const f = fixture();
      const acme = await setup(f);
      const view = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: ADA,
        paymentCollectionMethod: 'remittance',
        initialBillingAt: '2026-03-05T00:00:00Z',
      });
      f.clock.set('2026-03-05T00:00:00Z');
      await f.engine.runDue();
      const started = await acme.subscriptions.get(view.subscription.id);
      expect(started.subscription.state).toBe('active');
      expect(started.balanceInCents).toBe(1500);
      expect(f.gateway.chargeCalls).toBe(0);
      const { invoices } = await acme.invoices.list({ subscriptionId: view.subscription.id });
      expect(invoices.map((i) => [i.status, i.totalInCents])).toEqual([['open', 1500]]);
    });

    it('a past or present initial_billing_at is an ordinary signup, charged now', async () => {
      const f = fixture();
      const acme = await setup(f);
      const view = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: ADA,
        creditCard: VISA,
        initialBillingAt: '2026-02-01T00:00:00Z',
      });
      expect(view.subscription).toMatchObject({ state: 'active', currentPeriodStartedAt: at(START) });
      expect(view.balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(1);
    });

    it('refuses bad timing input with 422s, creating and charging nothing', async () => {
      const f = fixture();
      const acme = await setup(f);
      const cases: { input: Record<string, unknown>; message: string; attribute: string }[] = [
        { input: { initialBillingAt: 'soon' }, message: 'Initial billing at', attribute: 'initial_billing_at' },
        {
          input: { initialBillingAt: '2026-04-01T00:00:00Z', nextBillingAt: '2026-04-01T00:00:00Z' },
          message: 'Initial billing at: cannot be combined with next billing at.',
          attribute: 'initial_billing_at',
        },
        {
          input: { expiresAt: '2026-03-01T00:00:00Z' },
          message: 'Expires at: must be in the future.',
          attribute: 'expires_at',
        },
        {
          input: { initialBillingAt: '2026-04-01T00:00:00Z', expiresAt: '2026-03-20T00:00:00Z' },
          message: 'Expires at: must be after initial billing at.',
          attribute: 'expires_at',
        },
      ];
      for (const c of cases) {
        const error = await rejection(
          acme.subscriptions.create({ productHandle: 'basic', customer: ADA, creditCard: VISA, ...c.input }),
        );
        expect(error.code).toBe('validation');
        expect(error.details).toEqual([expect.objectContaining({ attribute: c.attribute })]);
        expect(error.details[0]!.message).toContain(c.message);
      }
      expect(await acme.subscriptions.list()).toHaveLength(0);
      expect(await acme.customers.list()).toHaveLength(0);
      expect(f.gateway.chargeCalls).toBe(0);
    });

    it('expires_at given at signup expires the subscription at that instant, with no further renewals', async () => {
      const f = fixture();
      const acme = await setup(f);
      const view = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: ADA,
        creditCard: VISA,
        expiresAt: '2026-04-15T00:00:00Z',
      });
      const id = view.subscription.id;
      expect(view.subscription.expiresAt).toEqual(at('2026-04-15T00:00:00Z'));
      expect(f.gateway.chargeCalls).toBe(1);
      // The renewal before the end date is charged.
      f.clock.set('2026-04-02T10:00:00Z');
      await f.engine.runDue();
      expect(f.gateway.chargeCalls).toBe(2);
      expect((await acme.subscriptions.get(id)).subscription.state).toBe('active');
      f.clock.set('2026-04-15T00:00:00Z');
      await f.engine.runDue();
      const expired = await acme.subscriptions.get(id);
      expect(expired.subscription).toMatchObject({ state: 'expired', nextAssessmentAt: null });
      expect(await eventKeys(acme, id)).toContain('subscription_state_change');
      f.clock.set('2026-08-01T00:00:00Z');
      await f.engine.runDue();
      expect(f.gateway.chargeCalls).toBe(2);
      expect((await acme.subscriptions.get(id)).subscription.state).toBe('expired');
    });

    it('a delayed signup with expires_at starts, then expires at the given instant', async () => {
      const f = fixture();
      const acme = await setup(f);
      const view = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: ADA,
        creditCard: VISA,
        initialBillingAt: '2026-03-10T00:00:00Z',
        expiresAt: '2026-03-25T00:00:00Z',
      });
      f.clock.set('2026-03-10T00:00:00Z');
      await f.engine.runDue();
      expect((await acme.subscriptions.get(view.subscription.id)).subscription.state).toBe('active');
      f.clock.set('2026-04-30T00:00:00Z');
      await f.engine.runDue();
      expect((await acme.subscriptions.get(view.subscription.id)).subscription.state).toBe('expired');
      expect(f.gateway.chargeCalls).toBe(1);
    });

    it('payment_profile_id: an existing profile of the customer pays the signup; no new profile is stored', async () => {
      const f = fixture();
      const acme = await setup(f);
      const first = await acme.subscriptions.create({ productHandle: 'basic', customer: ADA, creditCard: VISA });
      const profileId = first.paymentProfile!.id;
      const customerId = first.customer.id;
      const before = f.gateway.chargeCalls;
      const second = await acme.subscriptions.create({
        productHandle: 'basic',
        customerId,
        paymentProfileId: profileId,
      });
      expect(second.subscription.paymentProfileId).toBe(profileId);
      expect(second.paymentProfile?.id).toBe(profileId);
      expect(second.balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(before + 1);
      expect(await acme.paymentProfiles.list({ customerId })).toHaveLength(1);
      // Without a customer: the profile's own customer.
      const third = await acme.subscriptions.create({ productHandle: 'basic', paymentProfileId: profileId });
      expect(third.customer.id).toBe(customerId);
      expect(third.subscription.paymentProfileId).toBe(profileId);
      expect(f.gateway.chargeCalls).toBe(before + 2);
    });

    it('payment_profile_id: a delayed signup is charged to the profile when it starts', async () => {
      const f = fixture();
      const acme = await setup(f);
      const first = await acme.subscriptions.create({ productHandle: 'basic', customer: ADA, creditCard: VISA });
      const second = await acme.subscriptions.create({
        productHandle: 'basic',
        customerId: first.customer.id,
        paymentProfileId: first.paymentProfile!.id,
        initialBillingAt: '2026-03-04T00:00:00Z',
      });
      expect(second.subscription.state).toBe('awaiting_signup');
      f.clock.set('2026-03-04T00:00:00Z');
      await f.engine.runDue();
      const started = await acme.subscriptions.get(second.subscription.id);
      expect(started.subscription.state).toBe('active');
      expect(started.balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(2);
    });

    it('payment_profile_id: refuses another customer’s profile, a missing one, one beside a card, and a new customer', async () => {
      const f = fixture();
      const acme = await setup(f);
      const ada = await acme.subscriptions.create({ productHandle: 'basic', customer: ADA, creditCard: VISA });
      const bob = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Bob', lastName: 'B', email: 'bob@example.com', reference: 'bob-1' },
        creditCard: VISA,
      });
      const calls = f.gateway.chargeCalls;
      const adaProfile = ada.paymentProfile!.id;
      const cases: { input: Parameters<Acme['subscriptions']['create']>[0]; message: string }[] = [
        {
          input: { productHandle: 'basic', customerId: bob.customer.id, paymentProfileId: adaProfile },
          message: 'Payment profile id: does not belong to the customer of this subscription.',
        },
        {
          input: { productHandle: 'basic', customerReference: 'bob-1', paymentProfileId: adaProfile },
          message: 'Payment profile id: does not belong to the customer of this subscription.',
        },
        {
          input: { productHandle: 'basic', customerId: ada.customer.id, paymentProfileId: 99_999 },
          message: "Payment profile with id '99999' does not exist for this site.",
        },
        {
          input: {
            productHandle: 'basic',
            customerId: ada.customer.id,
            paymentProfileId: adaProfile,
            creditCard: VISA,
          },
          message:
            'Payment profile id: cannot be given together with credit card attributes or payment profile attributes.',
        },
        {
          input: {
            productHandle: 'basic',
            customer: { firstName: 'C', lastName: 'C', email: 'c@example.com' },
            paymentProfileId: adaProfile,
          },
          message: 'Payment profile id: a new customer has no payment profiles; give credit card attributes instead.',
        },
      ];
      for (const c of cases) {
        const error = await rejection(acme.subscriptions.create(c.input));
        expect(error.code).toBe('validation');
        expect(error.details).toEqual([{ message: c.message, attribute: 'payment_profile_id' }]);
      }
      expect(f.gateway.chargeCalls).toBe(calls);
      expect(await acme.subscriptions.list()).toHaveLength(2);
      expect(await acme.customers.list()).toHaveLength(2);
      // customer_reference names the customer: with the right profile, it signs up.
      const bobAgain = await acme.subscriptions.create({
        productHandle: 'basic',
        customerReference: 'bob-1',
        paymentProfileId: bob.paymentProfile!.id,
      });
      expect(bobAgain.customer.id).toBe(bob.customer.id);
    });
  });
}
