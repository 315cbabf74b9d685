import { SubscriptionState, SubscriptionsController } from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk, sdkFailure } from './support/maxio-sdk.js';

/**
 * The official Maxio SDK creating subscriptions with `paymentProfileId`, `initialBillingAt` (a
 * delayed signup) and `expiresAt` against the server in `chargify` compat: the answers parse with
 * the SDK's own schemas and read back as asked; a foreign profile is the service's 422.
 */

const CARD = { fullNumber: '4111111111111111', expirationMonth: '12', expirationYear: '2030' };
const ADA = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

describe('official Maxio SDK 6.1.0: signup timing and existing payment profiles', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('creates a delayed signup with an existing payment profile and an end date, then it starts and expires', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const subscriptions = new SubscriptionsController(acmeClient(f));
    const first = await sdk(
      subscriptions.createSubscription({
        subscription: { productHandle: 'pro', customerAttributes: ADA, creditCardAttributes: CARD },
      }),
    );
    const customerId = first.subscription!.customer!.id!;
    const profileId = first.subscription!.creditCard!.id!;

    const created = await sdk(
      subscriptions.createSubscription({
        subscription: {
          productHandle: 'pro',
          customerId,
          paymentProfileId: profileId,
          initialBillingAt: '2026-02-01T09:00:00-05:00',
          expiresAt: '2026-04-15T09:00:00-04:00',
        },
      }),
    );
    const sub = created.subscription!;
    expect(sub.state).toBe(SubscriptionState.AwaitingSignup);
    expect(sub.nextAssessmentAt).toBe('2026-02-01T09:00:00-05:00');
    expect(sub.expiresAt).toBe('2026-04-15T09:00:00-04:00');
    expect(sub.creditCard?.id).toBe(profileId);
    expect(sub.customer?.id).toBe(customerId);
    expect(f.gateway.chargeCalls).toBe(1);

    f.clock.set('2026-02-01T14:00:00Z');
    await f.engine.runDue();
    const started = await sdk(subscriptions.readSubscription(sub.id!));
    expect(started.subscription).toMatchObject({
      state: SubscriptionState.Active,
      balanceInCents: BigInt(0),
      activatedAt: '2026-02-01T09:00:00-05:00',
      currentPeriodEndsAt: '2026-03-01T09:00:00-05:00',
    });
    expect(f.gateway.chargeCalls).toBe(2);

    f.clock.set('2026-04-15T13:00:00Z');
    await f.engine.runDue();
    const expired = await sdk(subscriptions.readSubscription(sub.id!));
    expect(expired.subscription?.state).toBe(SubscriptionState.Expired);
    // Paid at the start (Feb 1) and the renewals of Mar 1 and Apr 1; never after the end date.
    const payments = async () =>
      (await f.engine.site('acme').subscriptions.transactions(sub.id!))
        .filter((t) => t.type === 'payment')
        .map((t) => t.createdAt.toISOString());
    expect(await payments()).toEqual([
      '2026-02-01T14:00:00.000Z',
      '2026-03-01T14:00:00.000Z',
      '2026-04-01T13:00:00.000Z',
    ]);
    f.clock.set('2026-07-01T00:00:00Z');
    await f.engine.runDue();
    expect(await payments()).toHaveLength(3);
  });

  it('refuses a payment profile of another customer with a 422', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const subscriptions = new SubscriptionsController(acmeClient(f));
    const ada = await sdk(
      subscriptions.createSubscription({
        subscription: { productHandle: 'pro', customerAttributes: ADA, creditCardAttributes: CARD },
      }),
    );
    const bob = await sdk(
      subscriptions.createSubscription({
        subscription: {
          productHandle: 'pro',
          customerAttributes: { ...ADA, firstName: 'Bob', email: 'bob@example.com' },
          creditCardAttributes: CARD,
        },
      }),
    );
    const refused = await sdkFailure(
      subscriptions.createSubscription({
        subscription: {
          productHandle: 'pro',
          customerId: bob.subscription!.customer!.id!,
          paymentProfileId: ada.subscription!.creditCard!.id!,
        },
      }),
    );
    expect(refused).toEqual({
      status: 422,
      body: { errors: ['Payment profile id: does not belong to the customer of this subscription.'] },
    });
  });
});
