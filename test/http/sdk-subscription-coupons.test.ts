import {
  ApiError,
  type Client,
  CouponsController,
  IntervalUnit,
  ProductFamiliesController,
  ProductsController,
  SubscriptionAddCouponError,
  SubscriptionsController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk } from './support/maxio-sdk.js';

/**
 * The official Maxio SDK adding and removing a live subscription's coupons
 * (`applyCouponsToSubscription`, `removeCouponFromSubscription`) against the server in `chargify`
 * compat: every success is parsed by the SDK's own schemas, every refusal is the SDK's 422 error.
 */

/** The SDK error of a call that is expected to fail. */
async function failure(call: Promise<unknown>): Promise<ApiError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected the SDK call to fail');
}

/** A family with the product `pro` (10.00 a month), coupons HALF and TENTH (stacking), and a subscription. */
async function setup(c: Client): Promise<number> {
  const family = await sdk(
    new ProductFamiliesController(c).createProductFamily({ productFamily: { name: 'Plans', handle: 'plans' } }),
  );
  const familyId = family.productFamily?.id as number;
  await sdk(
    new ProductsController(c).createProduct(String(familyId), {
      product: {
        name: 'Pro',
        handle: 'pro',
        description: 'Pro',
        priceInCents: BigInt(1000),
        interval: 1,
        intervalUnit: IntervalUnit.Month,
      },
    }),
  );
  const coupons = new CouponsController(c);
  for (const code of ['HALF', 'TENTH']) {
    await sdk(
      coupons.createCoupon(familyId, {
        coupon: { name: code, code, percentage: code === 'HALF' ? '50' : '10', recurring: true, stackable: true },
      }),
    );
  }
  const created = await sdk(
    new SubscriptionsController(c).createSubscription({
      subscription: {
        productHandle: 'pro',
        customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', reference: 'ada' },
        creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
      },
    }),
  );
  return created.subscription!.id as number;
}

describe('official Maxio SDK: a subscription’s coupons', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('applies coupons in the body, replaces them with the query form, and removes them', async () => {
    const c = acmeClient(fixture());
    const id = await setup(c);
    const subscriptions = new SubscriptionsController(c);
    const added = await sdk(subscriptions.applyCouponsToSubscription(id, undefined, { codes: ['HALF', 'TENTH'] }));
    expect(added.subscription?.id).toBe(id);
    expect(added.subscription?.couponCodes).toEqual(['HALF', 'TENTH']);
    const replaced = await sdk(subscriptions.applyCouponsToSubscription(id, 'TENTH'));
    expect(replaced.subscription?.couponCodes).toEqual(['TENTH']);
    const removed = await sdk(subscriptions.removeCouponFromSubscription(id, 'TENTH'));
    expect(removed).toBe('Coupon successfully removed');
    const read = await sdk(subscriptions.readSubscription(id));
    expect(read.subscription?.couponCodes).toEqual([]);
  });

  it('refuses an unknown, repeated or missing coupon with a 422 the SDK reads', async () => {
    const c = acmeClient(fixture());
    const id = await setup(c);
    const subscriptions = new SubscriptionsController(c);
    const unknown = await failure(subscriptions.applyCouponsToSubscription(id, undefined, { codes: ['NOPE'] }));
    expect(unknown).toBeInstanceOf(SubscriptionAddCouponError);
    expect(unknown.statusCode).toBe(422);
    expect(unknown.body).toContain("Coupon Codes: 'NOPE' - Coupon code could not be found.");
    await sdk(subscriptions.applyCouponsToSubscription(id, undefined, { codes: ['HALF'] }));
    const again = await failure(subscriptions.applyCouponsToSubscription(id, undefined, { codes: ['HALF'] }));
    expect(again.statusCode).toBe(422);
    const notApplied = await failure(subscriptions.removeCouponFromSubscription(id, 'TENTH'));
    expect(notApplied.statusCode).toBe(422);
    const read = await sdk(subscriptions.readSubscription(id));
    expect(read.subscription?.couponCodes).toEqual(['HALF']);
  });
});
