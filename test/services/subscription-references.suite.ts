import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const TAKEN = 'Reference: must be unique - that value has been taken.';

async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  await f.engine.sites.create({ subdomain: 'globex', currency: 'USD', timeZone: 'UTC' });
  for (const subdomain of ['acme', 'globex']) {
    const site = f.engine.site(subdomain);
    const family = await site.catalog.createFamily({ name: 'Plans' });
    await site.catalog.createProduct(family.id, {
      name: 'Basic',
      handle: 'basic',
      priceInCents: 1000,
      interval: 1,
      intervalUnit: 'month',
    });
  }
  let n = 0;
  const subscribe = (subdomain: string, reference?: string | null) =>
    f.engine.site(subdomain).subscriptions.create({
      productHandle: 'basic',
      customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` },
      creditCard: VISA,
      ...(reference === undefined ? {} : { reference }),
    });
  return { acme: f.engine.site('acme'), globex: f.engine.site('globex'), subscribe };
}

/** Subscription references: signup, update, lookup, uniqueness per site. */
export function subscriptionReferencesSuite(harness: StorageHarness): void {
  describe(`subscription references (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-03-02T10:00:00Z');

    it('keeps the reference given at signup (trimmed) and finds the subscription by it', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const view = await subscribe('acme', '  sub-001 ');
      expect(view.subscription.reference).toBe('sub-001');
      const found = await acme.subscriptions.lookup('sub-001');
      expect(found.subscription.id).toBe(view.subscription.id);
      expect(found.customer.id).toBe(view.customer.id);
      // A blank reference is none.
      expect((await subscribe('acme', '  ')).subscription.reference).toBeNull();
      expect((await subscribe('acme')).subscription.reference).toBeNull();
    });

    it('answers not_found for an unknown or blank reference, and for another site’s', async () => {
      const f = fixture();
      const { acme, globex, subscribe } = await setup(f);
      await subscribe('globex', 'g-1');
      for (const reference of ['nope', '', 'g-1']) {
        const error = await rejection(acme.subscriptions.lookup(reference));
        expect(error.code).toBe('not_found');
      }
      expect((await globex.subscriptions.lookup('g-1')).subscription.reference).toBe('g-1');
    });

    it('refuses a taken reference at signup before charging, creating nothing', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      await subscribe('acme', 'dup');
      const charges = f.gateway.chargeCalls;
      const error = await rejection(subscribe('acme', 'dup'));
      expect(error.code).toBe('validation');
      expect(error.details).toEqual([{ message: TAKEN, attribute: 'subscription.reference' }]);
      expect(f.gateway.chargeCalls).toBe(charges);
      expect(await acme.subscriptions.list()).toHaveLength(1);
      expect(await acme.customers.list()).toHaveLength(1);
      // Another site may use it.
      expect((await subscribe('globex', 'dup')).subscription.reference).toBe('dup');
    });

    it('overrides historical dates of an import without billing, state or event effects', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const view = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'imp@example.com' },
        creditCard: VISA,
        nextBillingAt: '2026-03-20T00:00:00Z',
      });
      const id = view.subscription.id;
      const eventsBefore = (await acme.events.listForSubscription(id)).length;
      const charges = f.gateway.chargeCalls;
      const overridden = await acme.subscriptions.override(id, {
        activatedAt: '2024-01-05T09:00:00Z',
        canceledAt: '2025-06-01T00:00:00+02:00',
        cancellationMessage: 'Moved from the old system',
        expiresAt: '2027-01-01T00:00:00Z',
        currentPeriodStartsAt: '2026-02-20T00:00:00Z',
      });
      const s = overridden.subscription;
      expect(s.activatedAt?.toISOString()).toBe('2024-01-05T09:00:00.000Z');
      expect(s.canceledAt?.toISOString()).toBe('2025-05-31T22:00:00.000Z');
      expect(s.cancellationMessage).toBe('Moved from the old system');
      expect(s.expiresAt?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
      expect(s.currentPeriodStartedAt.toISOString()).toBe('2026-02-20T00:00:00.000Z');
      // No billing effect: the state, next billing and ledger are as they were; nothing charged or recorded.
      expect(s.state).toBe(view.subscription.state);
      expect(s.nextAssessmentAt?.getTime()).toBe(view.subscription.nextAssessmentAt?.getTime());
      expect(s.currentPeriodEndsAt.getTime()).toBe(view.subscription.currentPeriodEndsAt.getTime());
      expect(overridden.balanceInCents).toBe(view.balanceInCents);
      expect(f.gateway.chargeCalls).toBe(charges);
      expect(await acme.events.listForSubscription(id)).toHaveLength(eventsBefore);
      // A null clears a date; nothing given changes nothing.
      expect((await acme.subscriptions.override(id, { canceledAt: null })).subscription.canceledAt).toBeNull();
      const same = await acme.subscriptions.override(id, {});
      expect(same.subscription.version).toBe((await acme.subscriptions.get(id)).subscription.version);
    });

    it('refuses bad override dates, and a period start on a billed subscription or in the future', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const billed = await subscribe('acme');
      const id = billed.subscription.id;
      const bad = await rejection(acme.subscriptions.override(id, { activatedAt: 'yesterday-ish', expiresAt: 'nope' }));
      expect(bad.code).toBe('validation');
      expect(bad.shape).toBe('single');
      expect(bad.messages).toEqual(['Activated at: is not a valid date.', 'Expires at: is not a valid date.']);
      const onBilled = await rejection(
        acme.subscriptions.override(id, { currentPeriodStartsAt: '2026-01-01T00:00:00Z' }),
      );
      expect(onBilled.messages).toEqual([
        'Current period starts at: can only be set on a subscription that has not been billed.',
      ]);
      const imported = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'imp2@example.com' },
        creditCard: VISA,
        nextBillingAt: '2026-03-20T00:00:00Z',
      });
      const future = await rejection(
        acme.subscriptions.override(imported.subscription.id, { currentPeriodStartsAt: '2026-03-05T00:00:00Z' }),
      );
      expect(future.messages).toEqual(['Current period starts at: must be before the current date and time.']);
      // Refused overrides change nothing.
      expect((await acme.subscriptions.get(id)).subscription).toEqual(billed.subscription);
      expect((await rejection(acme.subscriptions.override(999, {}))).code).toBe('not_found');
    });

    it('sets, changes and clears a reference; a taken one is a 422 that changes nothing', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const a = await subscribe('acme', 'a');
      const b = await subscribe('acme');
      f.clock.advance({ minutes: 5 });
      const set = await acme.subscriptions.setReference(b.subscription.id, 'b');
      expect(set.subscription.reference).toBe('b');
      expect(set.subscription.updatedAt.getTime()).toBe(f.clock.now().getTime());
      const error = await rejection(acme.subscriptions.setReference(b.subscription.id, 'a'));
      expect(error.code).toBe('validation');
      expect(error.details).toEqual([{ message: TAKEN, attribute: 'subscription.reference' }]);
      expect((await acme.subscriptions.get(b.subscription.id)).subscription.reference).toBe('b');
      // Setting its own reference again is not a conflict.
      expect((await acme.subscriptions.setReference(a.subscription.id, 'a')).subscription.reference).toBe('a');
      // Clearing frees it for another subscription.
      expect((await acme.subscriptions.setReference(a.subscription.id, null)).subscription.reference).toBeNull();
      expect((await acme.subscriptions.setReference(b.subscription.id, 'a')).subscription.reference).toBe('a');
      expect((await acme.subscriptions.lookup('a')).subscription.id).toBe(b.subscription.id);
      expect((await rejection(acme.subscriptions.lookup('b'))).code).toBe('not_found');
      const tooLong = await rejection(acme.subscriptions.setReference(a.subscription.id, 'x'.repeat(256)));
      expect(tooLong.code).toBe('validation');
      expect((await rejection(acme.subscriptions.setReference(999, 'z'))).code).toBe('not_found');
    });
  });
}
