import {
  AllVaults,
  ApiError,
  type Client,
  type CreditCardPaymentProfile,
  PaymentProfilesController,
  PaymentType,
  SubscriptionsController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk } from './support/maxio-sdk.js';

/**
 * The official Maxio SDK driving subscription references (create, update, `findSubscription`),
 * the override, and the payment profiles controller against the server in `chargify` compat.
 * Every response is validated by the SDK's own schemas; one it cannot parse fails here.
 */

async function failure(call: Promise<unknown>): Promise<{ status: number; body: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiError) return { status: error.statusCode, body: String(error.body) };
    throw error;
  }
  throw new Error('expected the SDK call to fail');
}

async function signup(c: Client, email: string, reference?: string) {
  const created = await sdk(
    new SubscriptionsController(c).createSubscription({
      subscription: {
        productHandle: 'pro',
        customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email },
        creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
        ...(reference === undefined ? {} : { reference }),
      },
    }),
  );
  return created.subscription!;
}

describe('official Maxio SDK: subscription references, override and payment profiles', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('signs up with a reference, finds the subscription by it, changes it, and refuses a taken one', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const c = acmeClient(f);
    const subscriptions = new SubscriptionsController(c);
    const sub = await signup(c, 'a@example.com', 'acct-1');
    expect(sub.reference).toBe('acct-1');
    const found = await sdk(subscriptions.findSubscription('acct-1'));
    expect(found.subscription?.id).toBe(sub.id);
    expect((await failure(subscriptions.findSubscription('nobody'))).status).toBe(404);
    const other = await signup(c, 'b@example.com');
    expect(other.reference).toBeNull();
    const updated = await sdk(subscriptions.updateSubscription(other.id!, { subscription: { reference: 'acct-2' } }));
    expect(updated.subscription?.reference).toBe('acct-2');
    const taken = await failure(subscriptions.updateSubscription(other.id!, { subscription: { reference: 'acct-1' } }));
    expect(taken.status).toBe(422);
    expect(JSON.parse(taken.body)).toEqual({ errors: ['Reference: must be unique - that value has been taken.'] });
    expect((await sdk(subscriptions.readSubscription(other.id!))).subscription?.reference).toBe('acct-2');
    const dup = await failure(
      subscriptions.createSubscription({
        subscription: {
          productHandle: 'pro',
          customerAttributes: { firstName: 'C', lastName: 'D', email: 'c@example.com' },
          creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
          reference: 'acct-2',
        },
      }),
    );
    expect(dup.status).toBe(422);
    expect((await sdk(subscriptions.listSubscriptions({}))).length).toBe(2);
  });

  it('overrides an import’s dates and answers a bad date in the single-error shape', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const c = acmeClient(f);
    const subscriptions = new SubscriptionsController(c);
    const sub = await signup(c, 'a@example.com');
    await sdk(
      subscriptions.overrideSubscription(sub.id!, {
        subscription: { activatedAt: '2024-01-05T09:00:00Z', cancellationMessage: 'Imported' },
      }),
    );
    const read = await sdk(subscriptions.readSubscription(sub.id!));
    expect(new Date(read.subscription!.activatedAt!).toISOString()).toBe('2024-01-05T09:00:00.000Z');
    expect(read.subscription?.cancellationMessage).toBe('Imported');
    expect(read.subscription?.state).toBe('active');
    const bad = await failure(subscriptions.overrideSubscription(sub.id!, { subscription: { expiresAt: 'never' } }));
    expect(bad.status).toBe(422);
    expect(JSON.parse(bad.body)).toEqual({ error: 'Expires at: is not a valid date.' });
  });

  it('creates, lists, reads, updates, makes default and deletes payment profiles', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const c = acmeClient(f);
    const profiles = new PaymentProfilesController(c);
    const sub = await signup(c, 'a@example.com');
    const customerId = sub.customer!.id!;
    const created = await sdk(
      profiles.createPaymentProfile({
        paymentProfile: {
          customerId,
          paymentType: PaymentType.CreditCard,
          fullNumber: '5555555555554444',
          expirationMonth: 4,
          expirationYear: 2031,
          billingCity: 'Boulder',
        },
      }),
    );
    const card = created.paymentProfile as CreditCardPaymentProfile;
    expect(card.maskedCardNumber).toBe('XXXX-XXXX-XXXX-4444');
    expect(card.billingCity).toBe('Boulder');
    expect(card.customerId).toBe(customerId);
    const id = card.id!;
    const imported = await sdk(
      profiles.createPaymentProfile({
        paymentProfile: {
          customerId,
          vaultToken: 'vault-9',
          currentVault: AllVaults.Bogus,
          expirationMonth: 1,
          expirationYear: 2033,
          lastFour: '9999',
        },
      }),
    );
    expect((imported.paymentProfile as CreditCardPaymentProfile).vaultToken).toBe('vault-9');
    const listed = await sdk(profiles.listPaymentProfiles({ customerId }));
    expect(listed.map((p) => (p.paymentProfile as CreditCardPaymentProfile).id)).toEqual([
      sub.creditCard!.id,
      id,
      (imported.paymentProfile as CreditCardPaymentProfile).id,
    ]);
    expect(await sdk(profiles.listPaymentProfiles({ customerId: 9999 }))).toEqual([]);
    const read = await sdk(profiles.readPaymentProfile(id));
    expect((read.paymentProfile as CreditCardPaymentProfile).expirationYear).toBe(2031);
    const updated = await sdk(profiles.updatePaymentProfile(id, { paymentProfile: { firstName: 'Grace' } }));
    expect((updated.paymentProfile as CreditCardPaymentProfile).firstName).toBe('Grace');

    const made = await sdk(profiles.changeSubscriptionDefaultPaymentProfile(sub.id!, id));
    expect((made.paymentProfile as CreditCardPaymentProfile).id).toBe(id);
    const view = await sdk(new SubscriptionsController(c).readSubscription(sub.id!));
    expect(view.subscription?.creditCard?.id).toBe(id);
    expect((await failure(profiles.changeSubscriptionDefaultPaymentProfile(sub.id!, id))).status).toBe(422);

    const inUse = await failure(profiles.deleteUnusedPaymentProfile(id));
    expect(inUse.status).toBe(422);
    await sdk(profiles.deleteUnusedPaymentProfile(sub.creditCard!.id!));
    expect((await failure(profiles.readPaymentProfile(sub.creditCard!.id!))).status).toBe(404);
    await sdk(profiles.deleteSubscriptionsPaymentProfile(sub.id!, id));
    const after = await sdk(new SubscriptionsController(c).readSubscription(sub.id!));
    expect(after.subscription?.creditCard).toBeUndefined();
    expect((await failure(profiles.readPaymentProfile(id))).status).toBe(404);
  });
});
