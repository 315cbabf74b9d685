import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/** `acme` (New York) with a 10.00-a-month product, and `globex` to prove lists stay in their site. */
async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'America/New_York' });
  await f.engine.sites.create({ subdomain: 'globex', currency: 'EUR', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  let n = 0;
  const subscribe = async (customer: Record<string, unknown> = {}) =>
    acme.subscriptions.create({
      productHandle: 'basic',
      customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com`, ...customer },
      creditCard: VISA,
    });
  return { acme, globex: f.engine.site('globex'), subscribe };
}

/** Events polling and the customer list's search, dates, direction and lookup, on every adapter. */
export function apiBreadthSuite(harness: StorageHarness): void {
  describe(`API breadth (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-02-10T15:00:00Z');

    describe('events polling', () => {
      it('lists the outbox newest first, with the subscription and customer each event is about', async () => {
        const f = fixture();
        const { acme, globex, subscribe } = await setup(f);
        const signup = await subscribe();
        const id = signup.subscription.id;
        f.clock.advance({ hours: 1 });
        await acme.subscriptions.cancel(id);

        const events = await acme.events.list();
        const keys = events.map((e) => e.event.key);
        expect(keys[0]).toBe('subscription_state_change');
        expect(keys).toContain('signup_success');
        expect(keys).toContain('customer_create');
        // Newest first, ids strictly decreasing.
        const ids = events.map((e) => e.event.id);
        expect([...ids].sort((a, b) => b - a)).toEqual(ids);
        const stateChange = events[0]!;
        expect(stateChange.subscriptionId).toBe(id);
        expect(stateChange.customerId).toBe(signup.customer.id);
        const created = events.find((e) => e.event.key === 'customer_create')!;
        expect(created).toMatchObject({ subscriptionId: null, customerId: signup.customer.id });
        // Another site's outbox is not visible, nor are the engine's own `site_update` events.
        expect(await globex.events.list()).toEqual([]);
        await acme.events.list().then((all) => expect(all.map((e) => e.event.key)).not.toContain('site_update'));
      });

      it('polls with since_id ascending, pages, filters keys and counts', async () => {
        const f = fixture();
        const { acme, subscribe } = await setup(f);
        const first = await subscribe();
        const second = await subscribe();
        const all = await acme.events.list({ direction: 'asc', perPage: 200 });
        expect(all.length).toBeGreaterThanOrEqual(4);
        const middle = all[2]!.event.id;
        // since_id and max_id are inclusive, as on the transaction list.
        const polled = await acme.events.list({ direction: 'asc', sinceId: String(middle) });
        expect(polled.map((e) => e.event.id)).toEqual(all.slice(2).map((e) => e.event.id));
        const bounded = await acme.events.list({ direction: 'asc', sinceId: middle, maxId: middle });
        expect(bounded.map((e) => e.event.id)).toEqual([middle]);
        const page2 = await acme.events.list({ direction: 'asc', page: 2, perPage: 2 });
        expect(page2.map((e) => e.event.id)).toEqual(all.slice(2, 4).map((e) => e.event.id));
        const signups = await acme.events.list({ filter: ['signup_success'] });
        // Newest first by default: the second signup, then the first.
        expect(signups.map((e) => e.subscriptionId)).toEqual([second.subscription.id, first.subscription.id]);
        expect(signups.every((e) => e.event.key === 'signup_success')).toBe(true);
        expect(await acme.events.count({ filter: ['signup_success'] })).toBe(2);
        expect(await acme.events.count()).toBe(all.length);
        // A key the engine never records, or keeps for itself, is not an error: it matches nothing.
        expect(await acme.events.list({ filter: ['chargeback_won', 'site_update'] })).toEqual([]);
      });

      it("lists one subscription's events and filters by date in the site's zone", async () => {
        const f = fixture();
        const { acme, subscribe } = await setup(f);
        const first = await subscribe();
        // 2026-02-10 15:00Z is 10:00 in New York; two days later is another local day.
        f.clock.advance({ days: 2 });
        const second = await subscribe();
        const mine = await acme.events.listForSubscription(second.subscription.id);
        expect(mine.length).toBeGreaterThan(0);
        expect(mine.every((e) => e.subscriptionId === second.subscription.id)).toBe(true);
        const onFirstDay = await acme.events.list({
          dateField: 'created_at',
          startDate: '2026-02-10',
          endDate: '2026-02-10',
        });
        expect(onFirstDay.length).toBeGreaterThan(0);
        expect(onFirstDay.every((e) => e.subscriptionId !== second.subscription.id)).toBe(true);
        expect(onFirstDay.some((e) => e.subscriptionId === first.subscription.id)).toBe(true);
        const later = await acme.events.list({ startDatetime: '2026-02-12T00:00:00Z' });
        expect(later.length).toBeGreaterThan(mine.length);
        expect(later.every((e) => e.customerId === second.customer.id)).toBe(true);
      });

      it('refuses bad input with every problem at once, and an unknown subscription with a 404', async () => {
        const f = fixture();
        const { acme } = await setup(f);
        const bad = await rejection(
          acme.events.list({ direction: 'sideways', dateField: 'updated_at', startDate: '2026-13-01', sinceId: 'x' }),
        );
        expect(bad.code).toBe('validation');
        expect(bad.details.map((d) => d.message)).toEqual([
          'Since id: must be a positive integer.',
          'Direction: must be asc or desc.',
          'Date field: must be created_at.',
          'Start date: is not a valid date.',
        ]);
        expect((await rejection(acme.events.listForSubscription(999))).code).toBe('not_found');
      });
    });

    describe('dunning and status actions', () => {
      it('retries a past-due payment now, keeping the attempt count, and refuses when nothing is in dunning', async () => {
        const f = fixture();
        const { acme, subscribe } = await setup(f);
        const { subscription } = await subscribe();
        expect((await rejection(acme.subscriptions.retry(subscription.id))).code).toBe('invalid_transition');
        f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
        f.clock.set('2026-03-10T16:00:00Z');
        await f.engine.runDue();
        const pastDue = await acme.subscriptions.get(subscription.id);
        expect(pastDue.subscription.state).toBe('past_due');
        expect(pastDue.balanceInCents).toBe(1000);
        const chargesBefore = f.gateway.chargeCalls;
        // The retry is due a day later; retrying now charges at once and settles the balance.
        const retried = await acme.subscriptions.retry(subscription.id);
        expect(f.gateway.chargeCalls).toBe(chargesBefore + 1);
        expect(retried.subscription.state).toBe('active');
        expect(retried.balanceInCents).toBe(0);
        const keys = (await acme.events.list({ filter: ['payment_success'], direction: 'desc' })).map(
          (e) => e.event.id,
        );
        expect(keys.length).toBeGreaterThanOrEqual(2);
        // Nothing is left to retry, and the scheduled retry was not run a second time.
        expect((await rejection(acme.subscriptions.retry(subscription.id))).code).toBe('invalid_transition');
        f.clock.set('2026-03-12T16:00:00Z');
        await f.engine.runDue();
        expect(f.gateway.chargeCalls).toBe(chargesBefore + 1);
      });

      it('activates a trialing subscription now by charging its first period; others are refused', async () => {
        const f = fixture();
        const { acme } = await setup(f);
        const family = await acme.catalog.createFamily({ name: 'Trials' });
        await acme.catalog.createProduct(family.id, {
          name: 'Trial',
          handle: 'trial',
          priceInCents: 2500,
          interval: 1,
          intervalUnit: 'month',
          trialInterval: 14,
          trialIntervalUnit: 'day',
          trialPriceInCents: 0,
        });
        const trial = await acme.subscriptions.create({
          productHandle: 'trial',
          customer: { firstName: 'T', lastName: 'R', email: 't@r.io' },
          creditCard: VISA,
        });
        expect(trial.subscription.state).toBe('trialing');
        const chargesBefore = f.gateway.chargeCalls;
        const active = await acme.subscriptions.activate(trial.subscription.id);
        expect(active.subscription.state).toBe('active');
        expect(f.gateway.chargeCalls).toBe(chargesBefore + 1);
        expect(active.balanceInCents).toBe(0);
        const again = await rejection(acme.subscriptions.activate(trial.subscription.id));
        expect(again.code).toBe('invalid_transition');
        expect(again.message).toContain('only a trialing one');
      });

      it('moves or clears the automatic resume date of a subscription on hold', async () => {
        const f = fixture();
        const { acme, subscribe } = await setup(f);
        const { subscription } = await subscribe();
        const notHeld = await rejection(
          acme.subscriptions.changeAutoResume(subscription.id, { automaticallyResumeAt: '2026-03-01' }),
        );
        expect(notHeld.code).toBe('invalid_transition');
        await acme.subscriptions.hold(subscription.id, { automaticallyResumeAt: '2026-02-20T00:00:00Z' });
        const past = await rejection(
          acme.subscriptions.changeAutoResume(subscription.id, { automaticallyResumeAt: '2026-02-01T00:00:00Z' }),
        );
        expect(past.message).toBe('Automatically resume at: must be in the future.');
        await acme.subscriptions.changeAutoResume(subscription.id, { automaticallyResumeAt: '2026-02-25T00:00:00Z' });
        // Not resumed at the old date, resumed at the new one.
        f.clock.set('2026-02-21T00:00:00Z');
        await f.engine.runDue();
        expect((await acme.subscriptions.get(subscription.id)).subscription.state).toBe('on_hold');
        f.clock.set('2026-02-25T00:00:01Z');
        await f.engine.runDue();
        expect((await acme.subscriptions.get(subscription.id)).subscription.state).toBe('active');
        // Cleared: held again, it stays on hold.
        await acme.subscriptions.hold(subscription.id, { automaticallyResumeAt: '2026-03-05T00:00:00Z' });
        await acme.subscriptions.changeAutoResume(subscription.id, { automaticallyResumeAt: null });
        f.clock.set('2026-03-06T00:00:00Z');
        await f.engine.runDue();
        expect((await acme.subscriptions.get(subscription.id)).subscription.state).toBe('on_hold');
      });
    });

    describe('customer list and lookup', () => {
      it('searches names, email, organization, reference and id, ignoring case and wildcards', async () => {
        const f = fixture();
        const { acme } = await setup(f);
        const ada = await acme.customers.create({
          firstName: 'Ada',
          lastName: 'Lovelace',
          email: 'ada@engines.example',
          organization: 'Analytical Engines',
          reference: 'cust-ada',
        });
        const bob = await acme.customers.create({ firstName: 'Bob', lastName: 'Babbage', email: 'bob_b@example.com' });
        const ids = async (q: string) => (await acme.customers.search({ q })).map((c) => c.id);
        expect(await ids('LOVE')).toEqual([ada.id]);
        expect(await ids('analytical')).toEqual([ada.id]);
        expect(await ids('cust-ada')).toEqual([ada.id]);
        expect(await ids('example')).toEqual([ada.id, bob.id]);
        expect(await ids(String(bob.id))).toContain(bob.id);
        // `_` and `%` are literal characters, not SQL wildcards.
        expect(await ids('bob_b')).toEqual([bob.id]);
        expect(await ids('b_b')).toEqual([bob.id]);
        expect(await ids('a_a')).toEqual([]);
        expect(await ids('%')).toEqual([]);
        expect(await ids('nobody')).toEqual([]);
        expect(await f.engine.site('globex').customers.search({ q: 'ada' })).toEqual([]);
      });

      it("orders by id in either direction, pages, and filters created_at or updated_at in the site's zone", async () => {
        const f = fixture();
        const { acme } = await setup(f);
        const make = (name: string) => acme.customers.create({ firstName: name, lastName: 'X', email: `${name}@x.io` });
        const a = await make('a');
        f.clock.advance({ days: 1 });
        const b = await make('b');
        f.clock.advance({ days: 1 });
        const c = await make('c');
        await acme.customers.update(a.id, { organization: 'Changed' });
        const ids = async (query: Parameters<typeof acme.customers.search>[0]) =>
          (await acme.customers.search(query)).map((x) => x.id);
        expect(await ids({})).toEqual([a.id, b.id, c.id]);
        expect(await ids({ direction: 'desc' })).toEqual([c.id, b.id, a.id]);
        expect(await ids({ direction: 'desc', page: 2, perPage: 2 })).toEqual([a.id]);
        // Created 2026-02-11 10:00 New York time.
        expect(await ids({ startDate: '2026-02-11', endDate: '2026-02-11' })).toEqual([b.id]);
        expect(await ids({ dateField: 'updated_at', startDate: '2026-02-12' })).toEqual([a.id, c.id]);
        expect(await ids({ startDatetime: '2026-02-11T16:00:00Z' })).toEqual([c.id]);
        const bad = await rejection(
          acme.customers.search({ direction: 'up', dateField: 'deleted_at', endDate: 'soon' }),
        );
        expect(bad.details.map((d) => d.message)).toEqual([
          'Direction: must be asc or desc.',
          'Date field: must be created_at or updated_at.',
          'End date: is not a valid date.',
        ]);
      });

      it('finds a customer by exact reference, and answers not_found for another site or a near miss', async () => {
        const f = fixture();
        const { acme, globex } = await setup(f);
        const ada = await acme.customers.create({ firstName: 'A', lastName: 'L', email: 'a@x.io', reference: 'Ref-1' });
        expect((await acme.customers.lookup('Ref-1')).id).toBe(ada.id);
        expect((await rejection(acme.customers.lookup('ref-1'))).code).toBe('not_found');
        expect((await rejection(globex.customers.lookup('Ref-1'))).code).toBe('not_found');
      });
    });
  });
}
