import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const MASTERCARD = '5555555555554444';

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
  });
  let n = 0;
  const subscribe = (customerId?: number) =>
    acme.subscriptions.create({
      productHandle: 'basic',
      ...(customerId === undefined
        ? { customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` } }
        : { customerId }),
      creditCard: VISA,
    });
  return { acme, subscribe };
}

/** Payment profiles: create (card, vault import), list, read, delete, a subscription's default. */
export function paymentProfilesSuite(harness: StorageHarness): void {
  describe(`payment profiles (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-03-02T10:00:00Z');

    it('creates a profile from a card: tokenized, only the last four kept, not made a default', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const signup = await subscribe();
      const profile = await acme.paymentProfiles.create({
        customerId: signup.customer.id,
        fullNumber: `${MASTERCARD.slice(0, 4)} ${MASTERCARD.slice(4)}`,
        expirationMonth: '3',
        expirationYear: 2031,
        billingAddress: { city: 'London', country: 'GB' },
      });
      expect(profile).toMatchObject({
        customerId: signup.customer.id,
        paymentType: 'credit_card',
        lastFour: '4444',
        cardType: 'master',
        expirationMonth: 3,
        expirationYear: 2031,
        currentVault: f.gateway.name,
        firstName: 'Ada',
        lastName: 'Lovelace',
      });
      expect(profile.billingAddress).toEqual({
        address: null,
        address2: null,
        city: 'London',
        state: null,
        zip: null,
        country: 'GB',
      });
      // The full number is nowhere in what is stored.
      expect(JSON.stringify(await acme.paymentProfiles.get(profile.id))).not.toContain(MASTERCARD);
      expect((await acme.subscriptions.get(signup.subscription.id)).paymentProfile?.id).not.toBe(profile.id);
    });

    it('imports a vault profile as given, without calling the gateway', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const signup = await subscribe();
      const profile = await acme.paymentProfiles.create({
        customerId: signup.customer.id,
        vaultToken: 'cus_vault_1',
        customerVaultToken: 'cus_1',
        currentVault: 'bogus',
        cardType: 'visa',
        lastFour: '4242',
        expirationMonth: 1,
        expirationYear: 2032,
        firstName: 'Grace',
      });
      expect(profile).toMatchObject({
        vaultToken: 'cus_vault_1',
        customerVaultToken: 'cus_1',
        currentVault: 'bogus',
        lastFour: '4242',
        firstName: 'Grace',
        lastName: 'Lovelace',
      });
    });

    it('refuses bad input with every problem at once and writes nothing', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const signup = await subscribe();
      const customerId = signup.customer.id;
      const before = await acme.paymentProfiles.list({ customerId });
      const cases: { input: Parameters<typeof acme.paymentProfiles.create>[0]; message: RegExp }[] = [
        { input: { customerId }, message: /^Either the full_number/ },
        {
          input: { customerId, fullNumber: '4111111111111112', expirationMonth: 1, expirationYear: 2030 },
          message: /is invalid/,
        },
        {
          input: { customerId, fullNumber: '4111111111111111', expirationMonth: 13, expirationYear: 2030 },
          message: /month: must be/,
        },
        {
          input: { customerId, vaultToken: 'v', expirationMonth: 1, expirationYear: 2030 },
          message: /^Current vault: cannot be blank/,
        },
        {
          input: { customerId, chargifyToken: 'tok_abc' },
          message: /^Chargify token: this server issues no one-time tokens/,
        },
        {
          input: { customerId, paymentType: 'bank_account' },
          message: /^Payment type: 'bank_account' is not supported/,
        },
        { input: { customerId, ...VISA, vaultToken: 'v', currentVault: 'bogus' }, message: /not both/ },
      ];
      for (const { input, message } of cases) {
        const error = await rejection(acme.paymentProfiles.create(input));
        expect(error.code, JSON.stringify(input)).toBe('validation');
        expect(error.messages.join(' ')).toMatch(message);
      }
      expect((await rejection(acme.paymentProfiles.create({ ...VISA }))).code).toBe('not_found');
      expect((await rejection(acme.paymentProfiles.create({ customerId: 999, ...VISA }))).code).toBe('not_found');
      expect(await acme.paymentProfiles.list({ customerId })).toEqual(before);
    });

    it('lists by customer, oldest first, a page at a time; reads one; unknown ids are not_found', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const a = await subscribe();
      const b = await subscribe();
      const extra = await acme.paymentProfiles.create({ customerId: a.customer.id, ...VISA });
      const ofA = await acme.paymentProfiles.list({ customerId: a.customer.id });
      expect(ofA.map((p) => p.id)).toEqual([a.paymentProfile!.id, extra.id]);
      expect((await acme.paymentProfiles.list()).map((p) => p.id)).toEqual([
        a.paymentProfile!.id,
        b.paymentProfile!.id,
        extra.id,
      ]);
      expect((await acme.paymentProfiles.list({ page: 2, perPage: 2 })).map((p) => p.id)).toEqual([extra.id]);
      expect(await acme.paymentProfiles.list({ customerId: 999 })).toEqual([]);
      expect((await acme.paymentProfiles.get(extra.id)).id).toBe(extra.id);
      expect((await rejection(acme.paymentProfiles.get(999))).code).toBe('not_found');
    });

    it('makes a profile of the customer the default and records the card update; refuses others', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const a = await subscribe();
      const b = await subscribe();
      const extra = await acme.paymentProfiles.create({ customerId: a.customer.id, ...VISA });
      const made = await acme.paymentProfiles.changeDefault(a.subscription.id, extra.id);
      expect(made.id).toBe(extra.id);
      const view = await acme.subscriptions.get(a.subscription.id);
      expect(view.paymentProfile?.id).toBe(extra.id);
      const events = await acme.events.listForSubscription(a.subscription.id);
      const update = events.find((e) => e.event.key === 'subscription_card_update');
      expect(update?.event.payload).toMatchObject({
        previous_payment_profile: { id: a.paymentProfile!.id },
        updated_payment_profile: { id: extra.id, masked_card_number: 'XXXX-XXXX-XXXX-1111' },
      });
      const again = await rejection(acme.paymentProfiles.changeDefault(a.subscription.id, extra.id));
      expect(again.messages).toEqual(["Payment profile: is already the subscription's default."]);
      const foreign = await rejection(acme.paymentProfiles.changeDefault(a.subscription.id, b.paymentProfile!.id));
      expect(foreign.messages).toEqual(["Payment profile: must belong to the subscription's customer."]);
      expect((await acme.subscriptions.get(a.subscription.id)).paymentProfile?.id).toBe(extra.id);
      expect((await rejection(acme.paymentProfiles.changeDefault(999, extra.id))).code).toBe('not_found');
      expect((await rejection(acme.paymentProfiles.changeDefault(a.subscription.id, 999))).code).toBe('not_found');
    });

    it('deletes an unused profile; one a live subscription uses is a 422 and stays', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const a = await subscribe();
      const spare = await acme.paymentProfiles.create({ customerId: a.customer.id, ...VISA });
      const error = await rejection(acme.paymentProfiles.delete(a.paymentProfile!.id));
      expect(error.code).toBe('validation');
      expect(error.messages).toEqual([
        `Payment profile: is in use by subscription ${a.subscription.id} and cannot be deleted.`,
      ]);
      expect((await acme.paymentProfiles.get(a.paymentProfile!.id)).id).toBe(a.paymentProfile!.id);
      await acme.paymentProfiles.delete(spare.id);
      expect((await rejection(acme.paymentProfiles.get(spare.id))).code).toBe('not_found');
      expect((await rejection(acme.paymentProfiles.delete(spare.id))).code).toBe('not_found');
      // Once the subscription has ended, its old card may go; the subscription is left without one.
      await acme.subscriptions.cancel(a.subscription.id);
      await acme.paymentProfiles.delete(a.paymentProfile!.id);
      expect((await acme.subscriptions.get(a.subscription.id)).paymentProfile).toBeNull();
    });

    it("deletes a subscription's profile from every subscription of the customer that uses it", async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const a = await subscribe();
      const second = await subscribe(a.customer.id);
      await acme.paymentProfiles.changeDefault(second.subscription.id, a.paymentProfile!.id);
      const other = await subscribe();
      const notTheirs = await rejection(
        acme.paymentProfiles.deleteForSubscription(a.subscription.id, other.paymentProfile!.id),
      );
      expect(notTheirs.code).toBe('not_found');
      await acme.paymentProfiles.deleteForSubscription(a.subscription.id, a.paymentProfile!.id);
      expect((await acme.subscriptions.get(a.subscription.id)).paymentProfile).toBeNull();
      expect((await acme.subscriptions.get(second.subscription.id)).paymentProfile).toBeNull();
      expect((await rejection(acme.paymentProfiles.get(a.paymentProfile!.id))).code).toBe('not_found');
      // The other customer's card is untouched.
      expect((await acme.subscriptions.get(other.subscription.id)).paymentProfile?.id).toBe(other.paymentProfile!.id);
    });
  });
}
