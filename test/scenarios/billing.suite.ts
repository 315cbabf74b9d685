import { type BillingError, createBillingEngine, type PaymentGateway, type SubscriptionView } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const DECLINING = { fullNumber: '2', expirationMonth: '01', expirationYear: '2031' };

async function setup(f: EngineFixture, product: Record<string, unknown> = {}) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'America/New_York' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const plan = await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
    ...product,
  });
  return { acme, plan };
}

/** Ledger lines as comparable rows: local date, type, kind, amount, balances. */
async function ledgerRows(f: EngineFixture, id: number) {
  const lines = await f.engine.site('acme').subscriptions.transactions(id);
  return lines.map((l) => [
    new Date(l.createdAt).toLocaleDateString('en-CA', { timeZone: 'America/New_York' }),
    l.type,
    l.kind,
    l.amountInCents,
    l.startingBalanceInCents,
    l.endingBalanceInCents,
  ]);
}

/** Clock-driven billing scenarios, on every adapter; each checks every ledger line. */
export function billingScenarios(harness: StorageHarness): void {
  describe(`billing scenarios (${harness.name})`, () => {
    const fixture = useEngine(harness, '2028-01-31T15:00:00Z');

    it('bills a year monthly from Jan 31 through a leap February without drift', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Ada', lastName: 'L', email: 'ada@example.com' },
        creditCard: VISA,
      });
      expect(sub.subscription.state).toBe('active');
      expect(sub.subscription.signupPaymentId).not.toBeNull();
      f.clock.set('2029-01-31T16:00:00Z');
      const summary = await f.engine.runDue();
      // 12 renewals, their 12 notices, and 36 expiring-card scans (the 1st, 15th and month end - 7).
      expect(summary).toEqual({
        processed: 60,
        notices: 12,
        scans: 36,
        renewed: 12,
        recovered: 0,
        declined: 0,
        failed: 0,
        errors: 0,
      });
      const expectedDays = [
        '2028-01-31',
        '2028-02-29',
        '2028-03-31',
        '2028-04-30',
        '2028-05-31',
        '2028-06-30',
        '2028-07-31',
        '2028-08-31',
        '2028-09-30',
        '2028-10-31',
        '2028-11-30',
        '2028-12-31',
        '2029-01-31',
      ];
      const rows = await ledgerRows(f, sub.subscription.id);
      expect(rows).toEqual(
        expectedDays.flatMap((day, _i) => [
          [day, 'charge', 'baseline', 1000, 0, 1000],
          [day, 'payment', null, 1000, 1000, 0],
        ]),
      );
      // Every renewal happens at 10:00 local time, whether EST or EDT.
      const lines = await acme.subscriptions.transactions(sub.subscription.id);
      for (const line of lines) {
        expect(new Date(line.createdAt).toLocaleTimeString('en-GB', { timeZone: 'America/New_York' })).toBe('10:00:00');
      }
      const view = await acme.subscriptions.get(sub.subscription.id);
      expect(view.balanceInCents).toBe(0);
      expect(view.subscription.periodIndex).toBe(12);
      expect(view.subscription.currentPeriodEndsAt.toISOString()).toBe('2029-02-28T15:00:00.000Z');
      expect(f.gateway.charges.size).toBe(13);
      expect(await f.engine.runDue()).toEqual({
        processed: 0,
        notices: 0,
        scans: 0,
        renewed: 0,
        recovered: 0,
        declined: 0,
        failed: 0,
        errors: 0,
      });
    });

    it('gives the same ledger for one clock jump as for daily steps', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const customer = { firstName: 'A', lastName: 'B', email: 'a@b.co' };
      const jump = await acme.subscriptions.create({ productHandle: 'basic', customer, creditCard: VISA });
      const daily = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { ...customer, email: 'c@d.co' },
        creditCard: VISA,
      });
      const start = f.clock.now().getTime();
      for (let day = 1; day <= 100; day++) {
        f.clock.set(start + day * 86_400_000);
        await f.engine.runDue({ until: f.clock.now() });
      }
      const strip = (rows: unknown[][]) => rows.map((r) => r.join('|'));
      const jumped = strip(await ledgerRows(f, jump.subscription.id));
      expect(jumped).toEqual(strip(await ledgerRows(f, daily.subscription.id)));
      expect(jumped).toHaveLength(8);
    });

    it('keeps a subscriber on the product version it was sold', async () => {
      const f = fixture();
      const { acme, plan } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      const v2 = await acme.catalog.updateProduct(plan.product.id, { priceInCents: 5000 });
      expect(v2.version.version).toBe(2);
      expect((await acme.catalog.getProduct('basic')).version.terms.priceInCents).toBe(5000);
      f.clock.set('2028-03-01T00:00:00Z');
      await f.engine.runDue();
      const charges = (await acme.subscriptions.transactions(sub.subscription.id)).filter((l) => l.type === 'charge');
      expect(charges.map((c) => c.amountInCents)).toEqual([1000, 1000]);
      const newer = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'C', lastName: 'D', email: 'c@d.co' },
        creditCard: VISA,
      });
      expect(newer.subscription.productVersion).toBe(2);
      expect(newer.balanceInCents).toBe(0);
    });

    it('creates nothing but a failure record when the signup card is declined', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const events: string[] = [];
      f.engine.on('*', (e) => events.push(e.key));
      const error = await rejection(
        acme.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'A', lastName: 'B', email: 'a@b.co', reference: 'r1' },
          creditCard: DECLINING,
        }),
      );
      expect(error.code).toBe('payment_declined');
      expect(error.httpStatus).toBe(422);
      expect(error.message).toBe('Bogus Gateway: Forced failure');
      expect(events).toEqual(['signup_failure']);
      const site = await f.engine.sites.get('acme');
      expect(await f.storage.transaction((tx) => tx.siteData.counts(site.id))).toEqual({
        customers: 0,
        subscriptions: 0,
        transactions: 0,
      });
      // The reference is still free: nothing of the failed signup remains.
      const ok = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co', reference: 'r1' },
        creditCard: VISA,
      });
      expect(ok.customer.reference).toBe('r1');
    });

    it('rejects bad signups with the service messages and no trace', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const site = await f.engine.sites.get('acme');
      const cases: [Record<string, unknown>, string][] = [
        [
          { productHandle: 'nope', customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' }, creditCard: VISA },
          "Product with API Handle 'nope' does not exist for this site.",
        ],
        [
          { productHandle: 'basic', creditCard: VISA },
          'A Customer must be specified for the subscription to be valid.',
        ],
        [
          { productHandle: 'basic', customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' } },
          'A payment method is required',
        ],
        [
          {
            productHandle: 'basic',
            customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
            creditCard: { ...VISA, expirationMonth: 13 },
          },
          'Credit card expiration month: must be a number from 1 to 12.',
        ],
        [
          {
            productHandle: 'basic',
            customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
            creditCard: { ...VISA, fullNumber: '4111111111111112' },
          },
          'Credit card number: is invalid.',
        ],
        [
          {
            productHandle: 'basic',
            customer: { firstName: '', lastName: 'B', email: 'not-an-email' },
            creditCard: VISA,
          },
          'First name: cannot be blank.',
        ],
      ];
      for (const [input, message] of cases) {
        const error = await rejection(acme.subscriptions.create(input as never));
        expect(error.code).toBe('validation');
        expect(error.message).toContain(message);
      }
      expect(await f.storage.transaction((tx) => tx.siteData.counts(site.id))).toEqual({
        customers: 0,
        subscriptions: 0,
        transactions: 0,
      });
      expect(f.gateway.chargeCalls).toBe(0);
    });

    it('moves a declined renewal to past_due with failure events and the amount owed', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      const events: string[] = [];
      f.engine.on('*', (e) => events.push(e.key));
      f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
      f.clock.set('2028-03-01T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ notices: 1, declined: 1, errors: 0 });
      const view = await acme.subscriptions.get(sub.subscription.id);
      expect(view.subscription.state).toBe('past_due');
      expect(view.balanceInCents).toBe(1000);
      expect(events).toEqual([
        'upcoming_renewal_notice',
        'invoice_issued',
        'subscription_state_change',
        'payment_failure',
        'renewal_failure',
        'dunning_step_reached',
      ]);
      expect((await ledgerRows(f, sub.subscription.id)).at(-1)).toEqual([
        '2028-02-29',
        'charge',
        'baseline',
        1000,
        0,
        1000,
      ]);
    });

    it('reconciles a renewal whose gateway answer was lost, by key, without charging twice', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'renewal:', charged: true });
      f.clock.set('2028-03-01T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 0, errors: 0 });
      expect((await acme.subscriptions.get(sub.subscription.id)).balanceInCents).toBe(1000);
      f.clock.set('2028-03-01T02:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 1, errors: 0 });
      const view = await acme.subscriptions.get(sub.subscription.id);
      expect(view.balanceInCents).toBe(0);
      expect([...f.gateway.charges.keys()].filter((k) => k.startsWith('renewal:'))).toEqual([
        `renewal:${sub.subscription.id}:1`,
      ]);
      expect((await ledgerRows(f, sub.subscription.id)).filter((r) => r[1] === 'payment')).toHaveLength(2);
    });

    it('charges nothing during a trial and the first period at its end', async () => {
      const f = fixture();
      const { acme } = await setup(f, {
        trialInterval: 14,
        trialIntervalUnit: 'day',
        trialPriceInCents: 0,
        initialChargeInCents: 500,
        initialChargeAfterTrial: false,
      });
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      expect(sub.subscription.state).toBe('trialing');
      expect(sub.subscription.trialEndedAt?.toISOString()).toBe('2028-02-14T15:00:00.000Z');
      f.clock.set('2028-02-20T00:00:00Z');
      await f.engine.runDue();
      const view = await acme.subscriptions.get(sub.subscription.id);
      expect(view.subscription.state).toBe('active');
      expect(await ledgerRows(f, sub.subscription.id)).toEqual([
        ['2028-01-31', 'charge', 'initial', 500, 0, 500],
        ['2028-01-31', 'payment', null, 500, 500, 0],
        ['2028-02-14', 'charge', 'baseline', 1000, 0, 1000],
        ['2028-02-14', 'payment', null, 1000, 1000, 0],
      ]);
      expect(view.subscription.currentPeriodEndsAt.toISOString()).toBe('2028-03-14T14:00:00.000Z');
    });

    it('retries a declined renewal every 24 hours and cancels after the last retry', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      const events: string[] = [];
      f.engine.on('*', (e) => events.push(e.key));
      f.gateway.injectFailure({ outcome: 'declined', times: 4 });
      f.clock.set('2028-03-05T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ declined: 4, renewed: 0, errors: 0 });
      const view = await acme.subscriptions.get(sub.subscription.id);
      expect(view.subscription).toMatchObject({ state: 'cancelled', cancellationMethod: 'dunning' });
      expect(view.subscription.canceledAt?.toISOString()).toBe('2028-03-03T15:00:00.000Z');
      expect(view.balanceInCents).toBe(1000);
      expect(events.filter((e) => e === 'dunning_step_reached')).toHaveLength(4);
      expect(events.filter((e) => e === 'payment_failure')).toHaveLength(4);
      expect(events).not.toContain('renewal_success');
      expect(f.gateway.chargeCalls).toBe(5);
      f.clock.set('2028-06-01T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 0, declined: 0, failed: 0, errors: 0 });
      expect(f.gateway.chargeCalls).toBe(5);
    });

    it('returns to active when a retry pays, without a renewal_success', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      const events: string[] = [];
      f.engine.on('*', (e) => events.push(e.key));
      f.gateway.injectFailure({ outcome: 'declined', times: 2 });
      f.clock.set('2028-03-05T00:00:00Z');
      await f.engine.runDue();
      const view = await acme.subscriptions.get(sub.subscription.id);
      expect(view.subscription.state).toBe('active');
      expect(view.balanceInCents).toBe(0);
      expect(events.filter((e) => e === 'renewal_success')).toHaveLength(0);
      expect(events.filter((e) => e === 'payment_success')).toHaveLength(1);
      expect(await ledgerRows(f, sub.subscription.id)).toEqual([
        ['2028-01-31', 'charge', 'baseline', 1000, 0, 1000],
        ['2028-01-31', 'payment', null, 1000, 1000, 0],
        ['2028-02-29', 'charge', 'baseline', 1000, 0, 1000],
        ['2028-03-02', 'payment', null, 1000, 1000, 0],
      ]);
      f.clock.set('2028-04-01T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 1, declined: 0 });
    });

    it('marks unpaid after dunning when the site says so, and accrues without collecting', async () => {
      const f = fixture();
      await f.engine.sites.create({
        subdomain: 'acme',
        currency: 'USD',
        timeZone: 'America/New_York',
        settings: { dunning: { retryCount: 1, finalAction: 'unpaid' } },
      });
      const acme = f.engine.site('acme');
      const family = await acme.catalog.createFamily({ name: 'Plans' });
      await acme.catalog.createProduct(family.id, {
        name: 'Basic',
        handle: 'basic',
        priceInCents: 1000,
        interval: 1,
        intervalUnit: 'month',
      });
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      f.gateway.injectFailure({ outcome: 'declined', times: 2 });
      f.clock.set('2028-04-01T00:00:00Z');
      await f.engine.runDue();
      const view = await acme.subscriptions.get(sub.subscription.id);
      expect(view.subscription.state).toBe('unpaid');
      expect(view.balanceInCents).toBe(2000);
      expect(f.gateway.chargeCalls).toBe(3);
      expect((await ledgerRows(f, sub.subscription.id)).map((r) => r[1])).toEqual([
        'charge',
        'payment',
        'charge',
        'charge',
      ]);
    });

    it('ends a no-obligation trial without a card, and sends a payment-expected one into dunning', async () => {
      const f = fixture();
      const { acme } = await setup(f, {
        trialInterval: 7,
        trialIntervalUnit: 'day',
        trialPriceInCents: 0,
        requireCreditCard: false,
      });
      const free = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
      });
      expect(free.subscription.state).toBe('trialing');
      const family = (await acme.catalog.listFamilies())[0]!;
      await acme.catalog.createProduct(family.id, {
        name: 'Strict',
        handle: 'strict',
        priceInCents: 1000,
        interval: 1,
        intervalUnit: 'month',
        trialInterval: 7,
        trialIntervalUnit: 'day',
        trialPriceInCents: 0,
        requireCreditCard: true,
      });
      const noCard = await rejection(
        acme.subscriptions.create({
          productHandle: 'strict',
          customer: { firstName: 'C', lastName: 'D', email: 'c@d.co' },
        }),
      );
      expect(noCard.message).toBe('Credit card: is required for this product.');
      // A payment-expected trial whose card declines at the trial end goes past due.
      const strict = await acme.subscriptions.create({
        productHandle: 'strict',
        customer: { firstName: 'C', lastName: 'D', email: 'c@d.co' },
        creditCard: { fullNumber: '2', expirationMonth: 1, expirationYear: 2031 },
      });
      expect(strict.subscription.state).toBe('trialing');
      f.clock.set('2028-02-08T00:00:00Z');
      await f.engine.runDue();
      expect((await acme.subscriptions.get(free.subscription.id)).subscription.state).toBe('trial_ended');
      expect(await ledgerRows(f, free.subscription.id)).toEqual([]);
      const strictView = await acme.subscriptions.get(strict.subscription.id);
      expect(strictView.subscription.state).toBe('past_due');
      expect(strictView.balanceInCents).toBe(1000);
    });

    it('charges a setup fee after the trial when the product says so', async () => {
      const f = fixture();
      const { acme } = await setup(f, {
        trialInterval: 1,
        trialIntervalUnit: 'month',
        trialPriceInCents: 100,
        initialChargeInCents: 2500,
        initialChargeAfterTrial: true,
      });
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      f.clock.set('2028-03-01T00:00:00Z');
      await f.engine.runDue();
      expect(await ledgerRows(f, sub.subscription.id)).toEqual([
        ['2028-01-31', 'charge', 'trial', 100, 0, 100],
        ['2028-01-31', 'payment', null, 100, 100, 0],
        ['2028-02-29', 'charge', 'baseline', 1000, 0, 1000],
        ['2028-02-29', 'charge', 'initial', 2500, 1000, 3500],
        ['2028-02-29', 'payment', null, 3500, 3500, 0],
      ]);
    });

    it('records an upcoming renewal notice three days ahead, only for the renewal it announces', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      const notices: { at: string; payload: Record<string, unknown> }[] = [];
      f.engine.on('upcoming_renewal_notice', (e) =>
        notices.push({ at: e.occurredAt.toISOString(), payload: e.payload as Record<string, unknown> }),
      );
      f.clock.set('2028-02-27T00:00:00Z');
      await f.engine.runDue();
      expect(notices.map((n) => n.at)).toEqual(['2028-02-26T15:00:00.000Z']);
      expect(notices[0]!.payload.estimated_renewal_amount_in_cents).toBe(1000);
      await acme.subscriptions.changeBillingDate(sub.subscription.id, '2028-03-20T15:00:00Z');
      f.clock.set('2028-03-19T00:00:00Z');
      await f.engine.runDue();
      expect(notices.map((n) => n.at)).toEqual(['2028-02-26T15:00:00.000Z', '2028-03-17T15:00:00.000Z']);
    });

    it('gives referral codes when the site enables referrals, and validates them', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const without = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      expect(without.subscription.referralCode).toBeNull();
      await f.engine.sites.update('acme', { settings: { referralsEnabled: true } });
      const codes = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const sub = await acme.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'A', lastName: 'B', email: `r${i}@b.co` },
          creditCard: VISA,
        });
        expect(sub.subscription.referralCode).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
        codes.add(sub.subscription.referralCode!);
        expect((await acme.referrals.validate(sub.subscription.referralCode!)).subscriptionId).toBe(
          sub.subscription.id,
        );
      }
      expect(codes.size).toBe(5);
      const unknown = await rejection(acme.referrals.validate('NOPE2345'));
      expect(unknown).toMatchObject({ code: 'not_found', message: 'Invalid referral code.', shape: 'string' });
    });

    it('returns a past-due subscription to active when its balance is paid outside the gateway', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
      f.clock.set('2028-03-01T00:00:00Z');
      await f.engine.runDue();
      expect((await acme.subscriptions.get(sub.subscription.id)).subscription.state).toBe('past_due');
      await acme.ledger.recordExternalPayment(sub.subscription.id, { amount: '10.00', memo: 'Paid by check' });
      const view = await acme.subscriptions.get(sub.subscription.id);
      expect(view.subscription.state).toBe('active');
      expect(view.balanceInCents).toBe(0);
      const calls = f.gateway.chargeCalls;
      f.clock.set('2028-03-10T00:00:00Z');
      await f.engine.runDue();
      expect(f.gateway.chargeCalls).toBe(calls);
    });

    it('settles a lost one-time charge at once when the gateway has it', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'charge:', charged: true });
      const charge = await acme.ledger.charge(sub.subscription.id, { amount: '7.00', memo: 'One Time Charge' });
      expect(charge.amountInCents).toBe(700);
      expect((await acme.subscriptions.get(sub.subscription.id)).balanceInCents).toBe(0);
      expect([...f.gateway.charges.keys()].filter((k) => k.startsWith('charge:'))).toHaveLength(1);
    });

    it('records a lost one-time charge the gateway never saw as failed, through due work, never charging it', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'charge:', charged: false });
      const error = await rejection(
        acme.ledger.charge(sub.subscription.id, { amount: '7.00', memo: 'One Time Charge' }),
      );
      expect(error.code).toBe('gateway_error');
      expect((await acme.subscriptions.transactions(sub.subscription.id)).slice(2)).toEqual([]);
      f.clock.advance({ hours: 2 });
      await f.engine.runDue();
      const lines = (await acme.subscriptions.transactions(sub.subscription.id)).slice(2);
      expect(lines.map((l) => [l.type, l.success, l.amountInCents, l.endingBalanceInCents])).toEqual([
        ['info', false, 700, 0],
      ]);
      expect([...f.gateway.charges.keys()].filter((k) => k.startsWith('charge:'))).toEqual([]);
      expect((await f.engine.runDue()).processed).toBe(0);
    });

    it('imports a vault profile instead of a card, and bills it without tokenizing anything', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        paymentProfile: {
          vaultToken: 'cus_vault_123',
          currentVault: 'bogus',
          cardType: 'visa',
          lastFour: '4242',
          expirationMonth: '08',
          expirationYear: 2031,
        },
      });
      expect(sub.paymentProfile).toMatchObject({
        vaultToken: 'cus_vault_123',
        currentVault: 'bogus',
        cardType: 'visa',
        lastFour: '4242',
        expirationMonth: 8,
        expirationYear: 2031,
      });
      expect(sub.balanceInCents).toBe(0);
      f.clock.set('2028-03-01T00:00:00Z');
      expect((await f.engine.runDue()).renewed).toBe(1);
      const both = await rejection(
        acme.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'A', lastName: 'B', email: 'c@b.co' },
          creditCard: VISA,
          paymentProfile: { vaultToken: 'x', expirationMonth: 1, expirationYear: 2030 },
        }),
      );
      expect(both.message).toBe('Provide either credit card attributes or payment profile attributes, not both.');
      const bad = await rejection(
        acme.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'A', lastName: 'B', email: 'd@b.co' },
          paymentProfile: { vaultToken: ' ', lastFour: '42', expirationMonth: 13, expirationYear: 2030 },
        }),
      );
      expect(bad.messages).toEqual([
        'Vault token: cannot be blank.',
        'Last four: must be 4 digits.',
        'Expiration month: must be a number from 1 to 12.',
      ]);
    });

    it('records the referrer of a signup that used a referral code, and refuses unknown codes before charging', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      await f.engine.sites.update('acme', { settings: { referralsEnabled: true } });
      const referrer = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      const code = referrer.subscription.referralCode!;
      const referred = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'C', lastName: 'D', email: 'c@d.co' },
        creditCard: VISA,
        ref: code.toLowerCase(),
      });
      expect(referred.subscription.data.referredBy).toBe(referrer.subscription.id);
      const calls = f.gateway.chargeCalls;
      const unknown = await rejection(
        acme.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'E', lastName: 'F', email: 'e@f.co' },
          creditCard: VISA,
          ref: 'NOPE2345',
        }),
      );
      expect(unknown.message).toBe("Ref: 'NOPE2345' is not a valid referral code.");
      expect(f.gateway.chargeCalls).toBe(calls);
    });

    it('records expiring_card on the scan days for cards that expire next month only', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const expiring = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: { ...VISA, expirationMonth: 3, expirationYear: 2028 },
      });
      await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'C', lastName: 'D', email: 'c@d.co' },
        creditCard: VISA,
      });
      const canceled = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'E', lastName: 'F', email: 'e@f.co' },
        creditCard: { ...VISA, expirationMonth: 3, expirationYear: 2028 },
      });
      await acme.subscriptions.cancel(canceled.subscription.id);
      const seen: string[] = [];
      f.engine.on('expiring_card', (e) => seen.push(`${e.subjectId}@${e.occurredAt.toISOString()}`));
      f.clock.set('2028-02-26T00:00:00Z');
      const summary = await f.engine.runDue();
      // Scans at 09:00 New York on Feb 1, Feb 15 and Feb 22 (29 - 7): the card expires in March.
      expect(summary.scans).toBe(3);
      expect(seen).toEqual([
        `${expiring.subscription.id}@2028-02-01T14:00:00.000Z`,
        `${expiring.subscription.id}@2028-02-15T14:00:00.000Z`,
        `${expiring.subscription.id}@2028-02-22T14:00:00.000Z`,
      ]);
      f.clock.set('2028-03-02T00:00:00Z');
      await f.engine.runDue();
      expect(seen).toHaveLength(3);
    });

    it('imports a subscription with a future billing date without charging now', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
        nextBillingAt: '2028-02-10T09:00:00-05:00',
      });
      expect(sub.subscription.state).toBe('active');
      expect(sub.balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(0);
      f.clock.set('2028-02-11T00:00:00Z');
      await f.engine.runDue();
      expect(await ledgerRows(f, sub.subscription.id)).toEqual([
        ['2028-02-10', 'charge', 'baseline', 1000, 0, 1000],
        ['2028-02-10', 'payment', null, 1000, 1000, 0],
      ]);
    });
  });

  describe(`imports with a past next_billing_at (${harness.name})`, () => {
    // 2028-01-31 10:00 in New York.
    const fixture = useEngine(harness, '2028-01-31T15:00:00Z');
    const customer = { firstName: 'A', lastName: 'B', email: 'a@b.co' };

    // Spec §3: a past or immediate next_billing_at "makes it process now": one assessment now, and
    // the first period starts at it, anchored as a new signup (Jan 31 -> Feb 29 -> Mar 31 -> Apr 30).
    const cases: [string, string][] = [
      ['one year back', '2027-01-31T10:00:00-05:00'],
      ['1900-01-01 (a date)', '1900-01-01'],
      ['the current instant', '2028-01-31T15:00:00Z'],
    ];
    for (const [why, nextBillingAt] of cases) {
      it(`charges once, now, and starts the period now: ${why}`, async () => {
        const f = fixture();
        const { acme } = await setup(f);
        const sub = await acme.subscriptions.create({
          productHandle: 'basic',
          customer,
          creditCard: VISA,
          nextBillingAt,
        });
        const s = sub.subscription;
        expect(s.state).toBe('active');
        expect(s.periodIndex).toBe(0);
        expect(s.periodAnchorAt.toISOString()).toBe('2028-01-31T15:00:00.000Z');
        expect(s.currentPeriodStartedAt.toISOString()).toBe('2028-01-31T15:00:00.000Z');
        expect(s.currentPeriodEndsAt.toISOString()).toBe('2028-02-29T15:00:00.000Z');
        expect(s.nextAssessmentAt?.toISOString()).toBe('2028-02-29T15:00:00.000Z');
        expect(sub.balanceInCents).toBe(0);
        expect(f.gateway.charges.size).toBe(1);
        // Nothing of the missed time is due: a worker running now renews nothing.
        expect((await f.engine.runDue()).renewed).toBe(0);
        expect(f.gateway.chargeCalls).toBe(1);
        expect(await ledgerRows(f, s.id)).toEqual([
          ['2028-01-31', 'charge', 'baseline', 1000, 0, 1000],
          ['2028-01-31', 'payment', null, 1000, 1000, 0],
        ]);
        const [charge] = await acme.subscriptions.transactions(s.id);
        expect(charge?.memo).toBe('Basic (2028-01-31 - 2028-02-29)');
        // From then on it renews one interval at a time, like any subscription.
        f.clock.set('2028-05-01T00:00:00Z');
        expect((await f.engine.runDue()).renewed).toBe(3);
        expect(f.gateway.charges.size).toBe(4);
        expect((await ledgerRows(f, s.id)).filter((r) => r[1] === 'charge').map((r) => r[0])).toEqual([
          '2028-01-31',
          '2028-02-29',
          '2028-03-31',
          '2028-04-30',
        ]);
        const view = await acme.subscriptions.get(s.id);
        expect(view.subscription.periodIndex).toBe(3);
        expect(view.subscription.currentPeriodEndsAt.toISOString()).toBe('2028-05-31T14:00:00.000Z');
        expect(view.balanceInCents).toBe(0);
      });
    }

    it('still catches up every missed period of an existing subscription after a worker outage', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const sub = await acme.subscriptions.create({ productHandle: 'basic', customer, creditCard: VISA });
      expect(f.gateway.charges.size).toBe(1);
      // The worker was down for three months: one run charges each missed period, each at its own instant.
      f.clock.set('2028-05-01T00:00:00Z');
      expect((await f.engine.runDue()).renewed).toBe(3);
      expect(f.gateway.charges.size).toBe(4);
      expect((await ledgerRows(f, sub.subscription.id)).filter((r) => r[1] === 'charge')).toEqual([
        ['2028-01-31', 'charge', 'baseline', 1000, 0, 1000],
        ['2028-02-29', 'charge', 'baseline', 1000, 0, 1000],
        ['2028-03-31', 'charge', 'baseline', 1000, 0, 1000],
        ['2028-04-30', 'charge', 'baseline', 1000, 0, 1000],
      ]);
      const view = await acme.subscriptions.get(sub.subscription.id);
      expect(view.subscription.periodIndex).toBe(3);
      expect(view.balanceInCents).toBe(0);
    });
  });

  describe(`concurrent signups for one customer reference (${harness.name})`, () => {
    const fixture = useEngine(harness, '2028-01-31T15:00:00Z');
    const REF = 'crm-4711';
    const customer = (i: number, reference?: string) => ({
      firstName: 'A',
      lastName: `B${i}`,
      email: `c${i}@example.com`,
      ...(reference === undefined ? {} : { reference }),
    });

    /** An engine on the fixture's storage and clock whose gateway holds charges until `open` is called. */
    function gatedEngine(f: EngineFixture) {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      let waiting = 0;
      let onCharge = () => {};
      const gateway: PaymentGateway = {
        name: f.gateway.name,
        supportsRefunds: f.gateway.supportsRefunds,
        tokenize: (card) => f.gateway.tokenize(card),
        async charge(request) {
          waiting += 1;
          onCharge();
          await gate;
          return f.gateway.charge(request);
        },
        refund: (request) => f.gateway.refund(request),
        lookup: (key) => f.gateway.lookup(key),
      };
      return {
        engine: createBillingEngine({ storage: f.storage, clock: f.clock, gateway }),
        open: () => open(),
        get waiting() {
          return waiting;
        },
        set onCharge(listener: () => void) {
          onCharge = listener;
        },
      };
    }

    type Outcome = { ok: true; view: SubscriptionView } | { ok: false; error: BillingError };

    /**
     * Starts `n` signups at once through a gated engine and opens the gate only when every one of
     * them has either finished or is waiting in the gateway: a signup that charges is still holding
     * its claim while all the others run.
     */
    async function gatedSignups(f: EngineFixture, n: number, reference: string | undefined): Promise<Outcome[]> {
      const gated = gatedEngine(f);
      let settled = 0;
      const check = () => {
        if (settled + gated.waiting === n) gated.open();
      };
      gated.onCharge = check;
      const runs = Array.from({ length: n }, (_, i) =>
        gated.engine
          .site('acme')
          .subscriptions.create({ productHandle: 'basic', customer: customer(i, reference), creditCard: VISA })
          .then(
            (view): Outcome => ({ ok: true, view }),
            async (error): Promise<Outcome> => ({ ok: false, error: await rejection(Promise.reject(error)) }),
          )
          .finally(() => {
            settled += 1;
            check();
          }),
      );
      return Promise.all(runs);
    }

    /** Asserts that the site holds exactly one customer, subscription and charge, and no money pending. */
    async function expectOneSignup(f: EngineFixture, outcomes: Outcome[]) {
      const won = outcomes.filter((o) => o.ok);
      const lost = outcomes.flatMap((o) => (o.ok ? [] : [o.error]));
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(outcomes.length - 1);
      for (const error of lost) {
        expect(['conflict', 'validation']).toContain(error.code);
        expect(error.httpStatus).toBeGreaterThanOrEqual(400);
        expect(error.httpStatus).toBeLessThan(500);
      }
      const acme = f.engine.site('acme');
      const winner = won[0]!.view;
      expect(winner.customer.reference).toBe(REF);
      expect(f.gateway.chargeCalls).toBe(1);
      expect(f.gateway.charges.size).toBe(1);
      expect(f.gateway.refunds.size).toBe(0);
      expect((await acme.customers.list()).map((c) => c.reference)).toEqual([REF]);
      expect((await acme.subscriptions.list()).map((v) => v.subscription.id)).toEqual([winner.subscription.id]);
      expect(await acme.subscriptions.transactions(winner.subscription.id)).toHaveLength(2);
      const siteId = winner.subscription.siteId;
      await f.storage.transaction(async (tx) => {
        // No attempt is left pending and no refund is waiting: the refused signups never charged.
        const far = new Date('2100-01-01T00:00:00Z');
        expect(await tx.payments.listUnresolved(far, 100)).toEqual([]);
        expect(await tx.dueWork.countDue({ until: far, kinds: ['reconcile_payment'], siteId })).toBe(0);
        // Only the winner's events: no signup_failure, one customer and one signup.
        const keys = (await tx.outbox.listAfter(siteId, 0, 1000)).map((e) => e.key);
        expect(keys.filter((k) => k === 'signup_success')).toHaveLength(1);
        expect(keys.filter((k) => k === 'customer_create')).toHaveLength(1);
        expect(keys.filter((k) => k === 'signup_failure')).toHaveLength(0);
        // The signup released its claim when it wrote the customer.
        expect(await tx.idempotency.release(siteId, 'open_collection', `customer_reference:${REF}`)).toBe(false);
      });
    }

    it('charges once for ten signups at once with one new reference while the first is at the gateway', async () => {
      const f = fixture();
      await setup(f);
      const outcomes = await gatedSignups(f, 10, REF);
      await expectOneSignup(f, outcomes);
      // The nine ran while the winner held the claim: each was refused by it, before any charge.
      for (const o of outcomes) {
        if (o.ok) continue;
        expect(o.error.code).toBe('conflict');
        expect(o.error.httpStatus).toBe(409);
        expect(o.error.message).toMatch(/signup for this customer reference is in progress/);
      }
    });

    it('charges once for ten signups at once with one new reference (truly parallel on Postgres)', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          acme.subscriptions.create({ productHandle: 'basic', customer: customer(i, REF), creditCard: VISA }).then(
            (view): Outcome => ({ ok: true, view }),
            async (error): Promise<Outcome> => ({ ok: false, error: await rejection(Promise.reject(error)) }),
          ),
        ),
      );
      await expectOneSignup(f, outcomes);
    });

    it('leaves signups without a reference unaffected: ten at once all charge and succeed', async () => {
      const f = fixture();
      await setup(f);
      // The gate opens only when all ten are at the gateway together: none waits for another.
      const outcomes = await gatedSignups(f, 10, undefined);
      expect(outcomes.filter((o) => o.ok)).toHaveLength(10);
      expect(f.gateway.charges.size).toBe(10);
      expect(await f.engine.site('acme').subscriptions.list({ perPage: 50 })).toHaveLength(10);
    });

    it('refuses a signup planned before its reference was taken, under the claim and before charging', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      // The late signup is held between its plan and its payment (in tokenizing the card) while
      // another signup for the reference completes and frees the claim.
      let open!: () => void;
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      let arrived!: () => void;
      const atGate = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const gateway: PaymentGateway = {
        name: f.gateway.name,
        supportsRefunds: f.gateway.supportsRefunds,
        async tokenize(card) {
          arrived();
          await gate;
          return f.gateway.tokenize(card);
        },
        charge: (request) => f.gateway.charge(request),
        refund: (request) => f.gateway.refund(request),
        lookup: (key) => f.gateway.lookup(key),
      };
      const slow = createBillingEngine({ storage: f.storage, clock: f.clock, gateway });
      const late = rejection(
        slow
          .site('acme')
          .subscriptions.create({ productHandle: 'basic', customer: customer(1, REF), creditCard: VISA }),
      );
      await atGate;
      const first = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: customer(0, REF),
        creditCard: VISA,
      });
      open();
      const refused = await late;
      expect(refused.code).toBe('validation');
      expect(refused.messages).toEqual(['Reference: must be unique - that value has been taken.']);
      expect(f.gateway.chargeCalls).toBe(1);
      expect((await acme.customers.list()).map((c) => c.id)).toEqual([first.customer.id]);
      const siteId = first.subscription.siteId;
      await f.storage.transaction(async (tx) => {
        const far = new Date('2100-01-01T00:00:00Z');
        expect(await tx.payments.listUnresolved(far, 100)).toEqual([]);
        expect(await tx.dueWork.countDue({ until: far, kinds: ['reconcile_payment'], siteId })).toBe(0);
        // The refusal rolled its claim back with it: the reference is not held.
        expect(await tx.idempotency.release(siteId, 'open_collection', `customer_reference:${REF}`)).toBe(false);
      });
    });

    it('compares the reference as it would be stored (trimmed), refusing a padded copy before charging', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      await acme.subscriptions.create({ productHandle: 'basic', customer: customer(0, REF), creditCard: VISA });
      const taken = await rejection(
        acme.subscriptions.create({ productHandle: 'basic', customer: customer(1, ` ${REF} `), creditCard: VISA }),
      );
      expect(taken.code).toBe('validation');
      expect(taken.messages).toEqual(['Reference: must be unique - that value has been taken.']);
      expect(f.gateway.chargeCalls).toBe(1);
      expect(await acme.customers.list()).toHaveLength(1);
    });

    it('frees the reference when the signup is declined or fails at the gateway', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const declined = await rejection(
        acme.subscriptions.create({ productHandle: 'basic', customer: customer(0, REF), creditCard: DECLINING }),
      );
      expect(declined.code).toBe('payment_declined');
      f.gateway.injectFailure({ outcome: 'error' });
      const failed = await rejection(
        acme.subscriptions.create({ productHandle: 'basic', customer: customer(1, REF), creditCard: VISA }),
      );
      expect(failed.code).toBe('gateway_error');
      const ok = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: customer(2, REF),
        creditCard: VISA,
      });
      expect(ok.customer.reference).toBe(REF);
      expect(f.gateway.charges.size).toBe(1);
    });

    it('holds the reference while a charge outcome is unknown, until its reconciliation has settled it', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      f.gateway.injectFailure({ outcome: 'unknown', charged: false });
      const lost = await rejection(
        acme.subscriptions.create({ productHandle: 'basic', customer: customer(0, REF), creditCard: VISA }),
      );
      expect(lost.code).toBe('gateway_error');
      const busy = await rejection(
        acme.subscriptions.create({ productHandle: 'basic', customer: customer(1, REF), creditCard: VISA }),
      );
      expect(busy.code).toBe('conflict');
      expect(f.gateway.chargeCalls).toBe(1);
      expect(f.gateway.charges.size).toBe(0);
      // The reconciliation (an hour later) finds nothing was taken; the claim lapses after two hours.
      f.clock.set('2028-01-31T17:00:00Z');
      await f.engine.runDue();
      const ok = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: customer(2, REF),
        creditCard: VISA,
      });
      expect(ok.customer.reference).toBe(REF);
      expect(f.gateway.charges.size).toBe(1);
    });
  });

  describe(`expiration (${harness.name})`, () => {
    const fixture = useEngine(harness, '2023-01-01T15:00:00Z');

    it('charges ten months and expires at the eleventh renewal without a charge (vector B6)', async () => {
      const f = fixture();
      const { acme } = await setup(f, { expirationInterval: 10, expirationIntervalUnit: 'month' });
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
      });
      expect(sub.subscription.expiresAt?.toISOString()).toBe('2023-11-01T14:00:00.000Z');
      f.clock.set('2024-06-01T00:00:00Z');
      await f.engine.runDue();
      const view = await acme.subscriptions.get(sub.subscription.id);
      expect(view.subscription.state).toBe('expired');
      const charges = (await ledgerRows(f, sub.subscription.id)).filter((r) => r[1] === 'charge').map((r) => r[0]);
      expect(charges).toEqual([
        '2023-01-01',
        '2023-02-01',
        '2023-03-01',
        '2023-04-01',
        '2023-05-01',
        '2023-06-01',
        '2023-07-01',
        '2023-08-01',
        '2023-09-01',
        '2023-10-01',
      ]);
      expect(f.gateway.charges.size).toBe(10);
    });
  });

  describe(`calendar billing (${harness.name})`, () => {
    const fixture = useEngine(harness, '2027-06-02T19:00:00Z');
    const local = (iso: string) => new Date(iso).toLocaleString('sv-SE', { timeZone: 'America/New_York' });
    // Reference §9.3: the first charge runs to the next snap at 12:00 local, prorated over the
    // snap-to-snap month it falls in; within 24 hours before a snap it is a full period instead.
    const cases: [string, number | 'end', string, number, string][] = [
      // signup (local), snap day, expected period end (local), expected charge, why
      [
        '2027-06-02 15:00',
        15,
        '2027-06-15 12:00',
        Math.round((3000 * (12 * 24 + 21) * 3600) / (31 * 86_400)),
        'prorated Jun 2 - Jun 15 of May 15 - Jun 15',
      ],
      ['2027-06-14 15:00', 15, '2027-07-15 12:00', 3000, 'within 24 h of the snap: full period'],
      [
        '2027-06-15 12:01',
        15,
        '2027-07-15 12:00',
        Math.round((3000 * (30 * 86_400 - 60)) / (30 * 86_400)),
        'prorated Jun 15 12:01 - Jul 15',
      ],
      [
        '2027-06-02 15:00',
        'end',
        '2027-06-30 12:00',
        Math.round((3000 * (27 * 24 + 21) * 3600) / (30 * 86_400)),
        'prorated to Jun 30 of May 31 - Jun 30',
      ],
      ['2027-06-29 15:00', 'end', '2027-07-31 12:00', 3000, 'within 24 h of the snap: full period'],
    ];
    for (const [signup, snapDay, end, charge, why] of cases) {
      it(`snap ${snapDay}, signup ${signup}: ${why}`, async () => {
        const f = fixture();
        f.clock.set(new Date(`${signup.replace(' ', 'T')}:00-04:00`));
        const { acme } = await setup(f, { priceInCents: 3000 });
        const sub = await acme.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
          creditCard: VISA,
          snapDay,
        });
        expect(local(sub.subscription.currentPeriodEndsAt.toISOString())).toBe(`${end}:00`);
        const [first] = await acme.subscriptions.transactions(sub.subscription.id);
        expect(first?.amountInCents).toBe(charge);
        f.clock.set('2027-10-01T00:00:00Z');
        await f.engine.runDue();
        const ends = (await acme.subscriptions.transactions(sub.subscription.id))
          .filter((l) => l.type === 'charge')
          .slice(1)
          .map((l) => local(l.createdAt.toISOString()));
        const day =
          snapDay === 'end'
            ? ['2027-06-30', '2027-07-31', '2027-08-31', '2027-09-30']
            : ['2027-06-15', '2027-07-15', '2027-08-15', '2027-09-15'];
        expect(ends).toEqual(day.filter((d) => `${d} 12:00:00` >= `${end}:00`).map((d) => `${d} 12:00:00`));
      });
    }

    it('refuses calendar billing with a trial, a non-monthly product or a billing date', async () => {
      const f = fixture();
      const { acme } = await setup(f, { trialInterval: 7, trialIntervalUnit: 'day' });
      const error = await rejection(
        acme.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
          creditCard: VISA,
          snapDay: 31,
          nextBillingAt: '2027-07-01',
        }),
      );
      expect(error.messages).toEqual(["Snap day: must be a number between 1 and 28 or 'end'."]);
      const more = await rejection(
        acme.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
          creditCard: VISA,
          snapDay: 3,
          nextBillingAt: '2027-07-01',
        }),
      );
      expect(more.messages).toEqual([
        'Snap day: calendar billing cannot be used with a trial.',
        'Snap day: cannot be combined with next billing at.',
      ]);
    });
  });
}
