import {
  IntervalUnit,
  PricePointType,
  ProductPricePointsController,
  SubscriptionProductsController,
  SubscriptionsController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk, sdkBasicProduct, sdkFailure } from './support/maxio-sdk.js';

/**
 * The official Maxio SDK signing up with `customPrice` and migrating with a custom price, against
 * the server in `chargify` compat; every response is validated by the SDK's own schemas.
 */

describe('official Maxio SDK: custom prices', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('creates a subscription with customPrice, reads its custom price point, and migrates it to another', async () => {
    const f = fixture();
    const c = acmeClient(f);
    const productId = await sdkBasicProduct(c);
    const subscriptions = new SubscriptionsController(c);
    const created = await sdk(
      subscriptions.createSubscription({
        subscription: {
          productHandle: 'basic',
          customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
          creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
          customPrice: {
            name: 'Ada special',
            handle: 'ada-special',
            priceInCents: BigInt(4200),
            interval: 1,
            intervalUnit: IntervalUnit.Month,
            trialPriceInCents: '0',
            trialInterval: '14',
            trialIntervalUnit: IntervalUnit.Day,
          },
        },
      }),
    );
    const subscription = created.subscription!;
    expect(subscription).toMatchObject({
      state: 'trialing',
      productPriceInCents: BigInt(4200),
      productPricePointType: PricePointType.Custom,
    });
    const id = subscription.id as number;
    const points = new ProductPricePointsController(c);
    const read = await sdk(points.readProductPricePoint(productId, subscription.productPricePointId as number));
    expect(read.pricePoint).toMatchObject({
      name: 'Ada special',
      type: PricePointType.Custom,
      subscriptionId: id,
      priceInCents: BigInt(4200),
      trialInterval: 14,
    });
    const listed = await sdk(points.listProductPricePoints({ productId }));
    expect(listed.pricePoints.map((p) => p.handle)).toEqual(['original']);
    const custom = await sdk(points.listProductPricePoints({ productId, filterType: [PricePointType.Custom] }));
    expect(custom.pricePoints.map((p) => p.subscriptionId)).toEqual([id]);

    // Another subscription cannot be created on it.
    const refused = await sdkFailure(
      subscriptions.createSubscription({
        subscription: {
          productHandle: 'basic',
          productPricePointId: subscription.productPricePointId as number,
          customerAttributes: { firstName: 'Bo', lastName: 'Ng', email: 'bo@example.com' },
          creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
        },
      }),
    );
    expect(refused.status).toBe(422);

    // The SDK's migration model has no customPrice; its extra properties go out as they are.
    const migrations = new SubscriptionProductsController(c);
    const moved = await sdk(
      migrations.migrateSubscriptionProduct(id, {
        migration: {
          productId,
          custom_price: { price_in_cents: 5000, interval: 1, interval_unit: 'month' },
        },
      }),
    );
    expect(moved.subscription).toMatchObject({
      productPriceInCents: BigInt(5000),
      productPricePointType: PricePointType.Custom,
    });
    expect(moved.subscription?.productPricePointId).not.toBe(subscription.productPricePointId);
    const bad = await sdkFailure(
      migrations.migrateSubscriptionProduct(id, {
        migration: { productId, custom_price: { price_in_cents: 5000, interval: 1, interval_unit: 'year' } },
      }),
    );
    expect(bad.status).toBe(422);
  });
});
