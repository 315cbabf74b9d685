import {
  ApiError,
  BillingManifestLineItemKind,
  type Client,
  CouponsController,
  CustomersController,
  IntervalUnit,
  ProductFamiliesController,
  ProductsController,
  SubscriptionPurgeType,
  SubscriptionsController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk } from './support/maxio-sdk.js';

/**
 * The official Maxio SDK previewing a signup (`previewSubscription`) and purging a subscription
 * (`purgeSubscription`) against the server in `chargify` compat: every success is parsed by the
 * SDK's own schemas, every refusal is the service's `{"errors":[...]}` 422.
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

const CARD = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/** The product `pro` (10.00 a month), a seat component at 3.00, and the coupon TENTH (10%). */
async function setup(f: HttpFixture, c: Client) {
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
  await sdk(
    new CouponsController(c).createCoupon(familyId, {
      coupon: { name: 'Tenth', code: 'TENTH', percentage: '10', recurring: true },
    }),
  );
  const seats = await f.engine.site('acme').components.create(familyId, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '3',
  });
  return { seats: seats.component.id };
}

describe('official Maxio SDK: signup preview and purge', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('previews a signup with a component and a coupon, and creates nothing', async () => {
    const f = fixture();
    const c = acmeClient(f);
    const { seats } = await setup(f, c);
    const subscriptions = new SubscriptionsController(c);
    const preview = await sdk(
      subscriptions.previewSubscription({
        subscription: {
          productHandle: 'pro',
          couponCode: 'TENTH',
          components: [{ componentId: seats, allocatedQuantity: 2 }],
        },
      }),
    );
    const current = preview.subscriptionPreview.currentBillingManifest!;
    // 1000 + 2 × 300 = 1600; 10% off.
    expect(current.subtotalInCents).toBe(BigInt(1600));
    expect(current.totalDiscountInCents).toBe(BigInt(160));
    expect(current.totalInCents).toBe(BigInt(1440));
    expect(current.existingBalanceInCents).toBe(BigInt(0));
    expect(current.lineItems?.map((item) => [item.kind, item.amountInCents])).toEqual([
      [BillingManifestLineItemKind.Baseline, BigInt(1000)],
      [BillingManifestLineItemKind.Component, BigInt(600)],
    ]);
    expect(current.lineItems?.[1]?.componentId).toBe(seats);
    expect(current.lineItems?.map((item) => item.discountAmountInCents)).toEqual([BigInt(100), BigInt(60)]);
    expect(current.lineItems?.[0]?.productHandle).toBe('pro');
    const next = preview.subscriptionPreview.nextBillingManifest!;
    // The renewal: base and seats, 10% off again.
    expect(next.subtotalInCents).toBe(BigInt(1600));
    expect(next.totalInCents).toBe(BigInt(1440));
    expect(next.startDate).toBe(current.endDate);
    expect(await sdk(subscriptions.listSubscriptions({}))).toEqual([]);
    expect(await sdk(new CustomersController(c).listCustomers({}))).toEqual([]);

    const unknown = await failure(subscriptions.previewSubscription({ subscription: { productHandle: 'nope' } }));
    expect(unknown.statusCode).toBe(422);
    expect(JSON.parse(unknown.body as string)).toEqual({
      errors: ["Product with API Handle 'nope' does not exist for this site."],
    });
  });

  it('purges a subscription with its customer and profile, after refusing a wrong ack', async () => {
    const f = fixture();
    const c = acmeClient(f);
    await setup(f, c);
    const subscriptions = new SubscriptionsController(c);
    const created = await sdk(
      subscriptions.createSubscription({
        subscription: {
          productHandle: 'pro',
          customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
          creditCardAttributes: CARD,
        },
      }),
    );
    const id = created.subscription!.id as number;
    const customerId = created.subscription!.customer!.id as number;

    const wrong = await failure(subscriptions.purgeSubscription(id, customerId + 1));
    expect(wrong.statusCode).toBe(422);
    expect(JSON.parse(wrong.body as string)).toEqual({
      errors: ["Ack: must equal the id of the subscription's customer."],
    });
    expect((await sdk(subscriptions.readSubscription(id))).subscription?.id).toBe(id);

    const purged = await sdk(
      subscriptions.purgeSubscription(id, customerId, [
        SubscriptionPurgeType.Customer,
        SubscriptionPurgeType.PaymentProfile,
      ]),
    );
    expect(purged.subscription?.id).toBe(id);
    expect(purged.subscription?.customer?.id).toBe(customerId);
    expect((await failure(subscriptions.readSubscription(id))).statusCode).toBe(404);
    expect((await failure(new CustomersController(c).readCustomer(customerId))).statusCode).toBe(404);
  });
});
