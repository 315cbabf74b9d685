import type { BillingEvent } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const MASTER = { fullNumber: '5555555555554444', expirationMonth: '10', expirationYear: '2031' };

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
  const events: BillingEvent[] = [];
  f.engine.on('*', (e) => events.push(e));
  let n = 0;
  const subscribe = async (extra: Record<string, unknown> = {}) =>
    acme.subscriptions.create({
      productHandle: 'basic',
      customer: { firstName: 'Ada', lastName: 'L', email: `ada${++n}@example.com` },
      creditCard: VISA,
      ...extra,
    });
  return { acme, plan, events, subscribe };
}

const stateChanges = (events: BillingEvent[]) =>
  events
    .filter((e) => e.key === 'subscription_state_change')
    .map((e) => {
      const s = e.payload.subscription as { previous_state: string; state: string };
      return `${s.previous_state}->${s.state}`;
    });

/** Lifecycle commands after signup, on every adapter. */
export function lifecycleScenarios(harness: StorageHarness): void {
  describe(`subscription lifecycle (${harness.name})`, () => {
    const fixture = useEngine(harness, '2028-01-31T15:00:00Z');

    it('cancels now, stops renewing, and refuses a second cancel with the service message', async () => {
      const f = fixture();
      const { acme, events, subscribe } = await setup(f);
      const { subscription } = await subscribe();
      f.clock.advance({ days: 3 });
      const canceled = await acme.subscriptions.cancel(subscription.id, { cancellationMessage: 'Too expensive' });
      expect(canceled.subscription).toMatchObject({
        state: 'cancelled',
        cancellationMessage: 'Too expensive',
        cancellationMethod: 'merchant_api',
        nextAssessmentAt: null,
      });
      expect(canceled.subscription.canceledAt?.toISOString()).toBe('2028-02-03T15:00:00.000Z');
      expect(stateChanges(events)).toEqual(['active->cancelled']);
      f.clock.set('2028-06-01T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 0, declined: 0, failed: 0, errors: 0 });
      const again = await rejection(acme.subscriptions.cancel(subscription.id));
      expect(again.code).toBe('invalid_transition');
      expect(again.message).toBe('The subscription is already canceled');
      expect(again.shape).toBe('single');
      expect(again.httpStatus).toBe(422);
    });

    it('cancels at the end of the period without charging it, and can be undone', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const a = await subscribe();
      const b = await subscribe();
      const marked = await acme.subscriptions.cancelAtEndOfPeriod(a.subscription.id, { cancellationMessage: 'bye' });
      expect(marked.subscription).toMatchObject({ state: 'active', cancelAtEndOfPeriod: true });
      expect(marked.subscription.delayedCancelAt?.toISOString()).toBe('2028-02-29T15:00:00.000Z');
      await acme.subscriptions.cancelAtEndOfPeriod(b.subscription.id);
      await acme.subscriptions.undoCancelAtEndOfPeriod(b.subscription.id);
      await acme.subscriptions.undoCancelAtEndOfPeriod(b.subscription.id);
      f.clock.set('2028-03-01T00:00:00Z');
      await f.engine.runDue();
      const aView = await acme.subscriptions.get(a.subscription.id);
      expect(aView.subscription).toMatchObject({
        state: 'cancelled',
        cancellationMessage: 'bye',
        cancellationMethod: 'merchant_api',
      });
      expect(aView.subscription.canceledAt?.toISOString()).toBe('2028-02-29T15:00:00.000Z');
      expect(
        (await acme.subscriptions.transactions(a.subscription.id)).filter((l) => l.type === 'charge'),
      ).toHaveLength(1);
      const bView = await acme.subscriptions.get(b.subscription.id);
      expect(bView.subscription).toMatchObject({ state: 'active', cancelAtEndOfPeriod: false, periodIndex: 1 });
    });

    it('refuses a delayed cancel while past due', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const { subscription } = await subscribe();
      f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
      f.clock.set('2028-03-01T00:00:00Z');
      await f.engine.runDue();
      expect((await acme.subscriptions.get(subscription.id)).subscription.state).toBe('past_due');
      const error = await rejection(acme.subscriptions.cancelAtEndOfPeriod(subscription.id));
      expect(error.code).toBe('validation');
      expect((await acme.subscriptions.get(subscription.id)).subscription.cancelAtEndOfPeriod).toBe(false);
    });

    it('reactivates a canceled subscription: balance reset, a new period charged now', async () => {
      const f = fixture();
      const { acme, events, subscribe } = await setup(f);
      const { subscription } = await subscribe();
      f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
      f.clock.set('2028-03-01T00:00:00Z');
      await f.engine.runDue();
      await acme.subscriptions.cancel(subscription.id);
      expect((await acme.subscriptions.get(subscription.id)).balanceInCents).toBe(1000);
      f.clock.set('2028-04-10T13:00:00Z');
      const back = await acme.subscriptions.reactivate(subscription.id);
      expect(back.subscription.state).toBe('active');
      expect(back.balanceInCents).toBe(0);
      expect(back.subscription.currentPeriodStartedAt.toISOString()).toBe('2028-04-10T13:00:00.000Z');
      expect(back.subscription.currentPeriodEndsAt.toISOString()).toBe('2028-05-10T13:00:00.000Z');
      const lines = await acme.subscriptions.transactions(subscription.id);
      expect(lines.slice(-3).map((l) => [l.type, l.kind, l.amountInCents, l.endingBalanceInCents])).toEqual([
        ['adjustment', 'reactivation', -1000, 0],
        ['charge', 'baseline', 1000, 1000],
        ['payment', null, 1000, 0],
      ]);
      expect(stateChanges(events)).toEqual(['active->past_due', 'past_due->cancelled', 'cancelled->active']);
      f.clock.set('2028-05-11T00:00:00Z');
      await f.engine.runDue();
      expect((await acme.subscriptions.get(subscription.id)).subscription.currentPeriodEndsAt.toISOString()).toBe(
        '2028-06-10T13:00:00.000Z',
      );
      const error = await rejection(acme.subscriptions.reactivate(subscription.id));
      expect(error.message).toBe(
        'Cannot reactivate a subscription that is not marked "Canceled", "Unpaid", or "Trial Ended".',
      );
    });

    it('keeps the balance with preserveBalance, and resumes within the canceled period', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const a = await subscribe();
      f.clock.advance({ days: 5 });
      await acme.subscriptions.cancel(a.subscription.id);
      const resumed = await acme.subscriptions.reactivate(a.subscription.id, { resume: true });
      expect(resumed.subscription.state).toBe('active');
      expect(resumed.subscription.currentPeriodEndsAt.toISOString()).toBe('2028-02-29T15:00:00.000Z');
      expect(
        (await acme.subscriptions.transactions(a.subscription.id)).filter((l) => l.type === 'charge'),
      ).toHaveLength(1);
      f.clock.set('2028-03-01T00:00:00Z');
      expect((await f.engine.runDue()).renewed).toBe(1);
      await acme.subscriptions.cancel(a.subscription.id);
      f.clock.set('2028-04-15T00:00:00Z');
      const late = await rejection(acme.subscriptions.reactivate(a.subscription.id, { requireResume: true }));
      expect(late.message).toBe("Request was 'resume only', but this subscription cannot be resumed.");
      const preserved = await acme.subscriptions.reactivate(a.subscription.id, { preserveBalance: true });
      expect(preserved.balanceInCents).toBe(0);
      expect((await acme.subscriptions.transactions(a.subscription.id)).some((l) => l.kind === 'reactivation')).toBe(
        false,
      );
    });

    it('holds, skips billing while held, refuses hold near billing, and resumes with a new period', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const { subscription } = await subscribe();
      f.clock.set('2028-02-29T00:00:00Z');
      const tooLate = await rejection(acme.subscriptions.hold(subscription.id));
      expect(tooLate.message).toBe('This subscription is not eligible to be put on hold.');
      f.clock.set('2028-02-10T00:00:00Z');
      const held = await acme.subscriptions.hold(subscription.id);
      expect(held.subscription).toMatchObject({ state: 'on_hold', nextAssessmentAt: null });
      f.clock.set('2028-04-01T00:00:00Z');
      expect(await f.engine.runDue()).toMatchObject({ renewed: 0, declined: 0, failed: 0, errors: 0 });
      const resumed = await acme.subscriptions.resume(subscription.id);
      expect(resumed.subscription.state).toBe('active');
      expect(resumed.balanceInCents).toBe(0);
      expect(resumed.subscription.currentPeriodEndsAt.toISOString()).toBe('2028-05-01T00:00:00.000Z');
      expect((await acme.subscriptions.transactions(subscription.id)).filter((l) => l.type === 'charge')).toHaveLength(
        2,
      );
      expect((await rejection(acme.subscriptions.resume(subscription.id))).message).toBe(
        'Only subscriptions that are on hold can be resumed.',
      );
    });

    it('resumes automatically at the given date', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const { subscription } = await subscribe();
      await acme.subscriptions.hold(subscription.id, { automaticallyResumeAt: '2028-03-15T09:00:00-04:00' });
      f.clock.set('2028-03-20T00:00:00Z');
      await f.engine.runDue();
      const view = await acme.subscriptions.get(subscription.id);
      expect(view.subscription.state).toBe('active');
      expect(view.subscription.currentPeriodStartedAt.toISOString()).toBe('2028-03-15T13:00:00.000Z');
      expect(view.balanceInCents).toBe(0);
    });

    it('moves the billing date, records the change, and bills a past date now', async () => {
      const f = fixture();
      const { acme, events, subscribe } = await setup(f);
      const { subscription } = await subscribe();
      const moved = await acme.subscriptions.changeBillingDate(subscription.id, '2028-02-10');
      expect(moved.subscription.nextAssessmentAt?.toISOString()).toBe('2028-02-10T05:00:00.000Z');
      const change = events.find((e) => e.key === 'billing_date_change');
      expect(change).toBeDefined();
      expect((change!.payload.subscription as { previous_billing_date: string }).previous_billing_date).toBe(
        '2028-02-29T15:00:00.000Z',
      );
      f.clock.set('2028-03-11T00:00:00Z');
      await f.engine.runDue();
      const view = await acme.subscriptions.get(subscription.id);
      // A date alone means the start of that local day: renewed at midnight EST on Feb 10 and
      // Mar 10; the Apr 10 boundary is midnight EDT.
      expect(view.subscription.currentPeriodStartedAt.toISOString()).toBe('2028-03-10T05:00:00.000Z');
      expect(view.subscription.currentPeriodEndsAt.toISOString()).toBe('2028-04-10T04:00:00.000Z');
      expect((await acme.subscriptions.transactions(subscription.id)).filter((l) => l.type === 'charge')).toHaveLength(
        3,
      );
      const now = await acme.subscriptions.changeBillingDate(subscription.id, '2028-01-01T00:00:00Z');
      expect(now.subscription.currentPeriodStartedAt.toISOString()).toBe('2028-03-11T00:00:00.000Z');
      expect((await acme.subscriptions.transactions(subscription.id)).filter((l) => l.type === 'charge')).toHaveLength(
        4,
      );
      const bad = await rejection(acme.subscriptions.changeBillingDate(subscription.id, 'tomorrow'));
      expect(bad.message).toBe('Next billing at: is not a valid date.');
    });

    it('moves the trial end with the billing date while trialing', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f, { trialInterval: 14, trialIntervalUnit: 'day', trialPriceInCents: 0 });
      const { subscription } = await subscribe();
      const moved = await acme.subscriptions.changeBillingDate(subscription.id, '2028-02-20T15:00:00Z');
      expect(moved.subscription.state).toBe('trialing');
      expect(moved.subscription.trialEndedAt?.toISOString()).toBe('2028-02-20T15:00:00.000Z');
    });

    it('updates customers with customer_update, guards references and deletion, and pages', async () => {
      const f = fixture();
      const { acme, events, subscribe } = await setup(f);
      const { customer } = await subscribe();
      const other = await acme.customers.create({
        firstName: 'Bo',
        lastName: 'B',
        email: 'bo@example.com',
        reference: 'bo',
      });
      const updated = await acme.customers.update(customer.id, {
        email: 'new@example.com',
        address: { city: 'Paris' },
      });
      expect(updated).toMatchObject({ email: 'new@example.com', version: 2 });
      expect(updated.address.city).toBe('Paris');
      expect(events.filter((e) => e.key === 'customer_update').map((e) => e.payload.changed)).toEqual([
        ['email', 'address'],
      ]);
      await acme.customers.update(customer.id, { email: 'new@example.com' });
      expect(events.filter((e) => e.key === 'customer_update')).toHaveLength(1);
      expect((await rejection(acme.customers.update(customer.id, { reference: 'bo' }))).message).toBe(
        'Reference: must be unique - that value has been taken.',
      );
      expect((await rejection(acme.customers.update(customer.id, { email: 'nope' }))).message).toBe(
        'Email address: must be a valid email address.',
      );
      expect((await rejection(acme.customers.delete(customer.id))).code).toBe('validation');
      await acme.customers.delete(other.id);
      expect((await rejection(acme.customers.get(other.id))).code).toBe('not_found');
      expect((await acme.customers.list(1, 1)).map((c) => c.id)).toEqual([customer.id]);
      expect(await acme.customers.list(2, 1)).toEqual([]);
    });

    it('replaces the card, never storing or emitting the full number, and refuses partial updates', async () => {
      const f = fixture();
      const { acme, events, subscribe } = await setup(f);
      const { subscription } = await subscribe();
      const updated = await acme.subscriptions.updateCard(subscription.id, MASTER);
      expect(updated.paymentProfile).toMatchObject({
        cardType: 'master',
        lastFour: '4444',
        expirationMonth: 10,
        expirationYear: 2031,
      });
      const event = events.find((e) => e.key === 'subscription_card_update');
      expect(event?.payload).toMatchObject({
        previous_payment_profile: { masked_card_number: 'XXXX-XXXX-XXXX-1111' },
        updated_payment_profile: { masked_card_number: 'XXXX-XXXX-XXXX-4444', card_type: 'master' },
      });
      const partial = await rejection(
        acme.subscriptions.updateCard(subscription.id, { expirationMonth: 1, expirationYear: 2032 } as never),
      );
      expect(partial.message).toBe('Credit card number: cannot be blank.');
      const profile = await acme.paymentProfiles.update(updated.paymentProfile!.id, {
        expirationMonth: '03',
        expirationYear: '2033',
      });
      expect(profile).toMatchObject({ lastFour: '4444', expirationMonth: 3, expirationYear: 2033 });
      f.clock.set('2028-03-01T00:00:00Z');
      expect((await f.engine.runDue()).renewed).toBe(1);
      const dump = JSON.stringify(
        await f.storage.transaction(async (tx) => {
          const site = (await tx.sites.findBySubdomain('acme'))!;
          const subs = await tx.subscriptions.list(site.id, {}, { page: 1, perPage: 200 });
          const profiles = await Promise.all(
            subs.flatMap((s) =>
              s.paymentProfileId ? [tx.customers.findPaymentProfile(site.id, s.paymentProfileId)] : [],
            ),
          );
          return {
            subs,
            profiles,
            old: await tx.customers.findPaymentProfile(site.id, 1),
            customers: await tx.customers.list(site.id, { page: 1, perPage: 200 }),
            ledger: await tx.ledger.list(site.id, {}, { page: 1, perPage: 200 }),
            outbox: await tx.outbox.listAfter(site.id, 0, 1000),
            payments: await tx.payments.listUnresolved(new Date('2100-01-01'), 1000),
          };
        }),
      );
      for (const number of [VISA.fullNumber, MASTER.fullNumber]) expect(dump).not.toContain(number);
      expect(dump).toContain('4444');
    });

    it('lists with state, product and date filters, sorting and clamped pages', async () => {
      const f = fixture();
      const { acme, plan, subscribe } = await setup(f);
      const a = await subscribe();
      f.clock.advance({ days: 2 });
      const b = await subscribe();
      f.clock.advance({ days: 2 });
      const c = await subscribe();
      await acme.subscriptions.cancel(b.subscription.id);
      const ids = async (query: Record<string, unknown>) =>
        (await acme.subscriptions.list(query as never)).map((v) => v.subscription.id);
      expect(await ids({})).toEqual([c.subscription.id, b.subscription.id, a.subscription.id]);
      expect(await ids({ direction: 'asc' })).toEqual([a.subscription.id, b.subscription.id, c.subscription.id]);
      expect(await ids({ state: 'canceled' })).toEqual([b.subscription.id]);
      expect(await ids({ state: ['active'] })).toEqual([c.subscription.id, a.subscription.id]);
      expect(await ids({ productId: plan.product.id, perPage: 1, page: 2 })).toEqual([b.subscription.id]);
      expect(await ids({ perPage: 500 })).toHaveLength(3);
      expect(await ids({ dateField: 'created_at', startDate: '2028-02-02', endDate: '2028-02-02' })).toEqual([
        b.subscription.id,
      ]);
      expect(await ids({ startDatetime: '2028-02-04T15:00:00Z' })).toEqual([c.subscription.id]);
      expect(await ids({ metadata: { color: 'blue' } })).toEqual([]);
      expect((await rejection(acme.subscriptions.list({ state: 'bogus' }))).message).toBe(
        "State: 'bogus' is not a valid state.",
      );
      expect((await rejection(acme.subscriptions.list({ startDate: '2028-13-01' }))).code).toBe('validation');
    });
  });
}
