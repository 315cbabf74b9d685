import {
  CollectionMethod,
  IntervalUnit,
  PricePointType,
  ProductPricePointsController,
  SubscriptionPurgeType,
  SubscriptionsController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk, sdkFailure } from './support/maxio-sdk.js';

/**
 * Subscription fields left undone in #19, over HTTP and through the official SDK: `offer_id` on
 * subscription reads, `prepayment_balance_in_cents` from the prepayment account, and a purge that
 * removes the subscription's custom price points.
 */

const CARD = { full_number: '4111111111111111', expiration_month: '12', expiration_year: '2030' };
const SDK_CARD = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

interface SubscriptionBody {
  id: number;
  offer_id: number | null;
  prepayment_balance_in_cents: number;
  customer: { id: number };
  product_price_point_id: number;
  product: { id: number };
  [key: string]: unknown;
}

let emails = 0;
const customer = () => ({ first_name: 'Ada', last_name: 'Lovelace', email: `ada${++emails}@example.com` });

/** `pro` (10.00 a month), coupon TEN (10%) and the offer `pro-deal` (Pro with TEN); its id. */
async function seed(f: HttpFixture): Promise<{ productId: number; offerId: number }> {
  const { familyId, productId } = await seedCatalog(f.engine);
  const acme = f.engine.site('acme');
  await acme.coupons.create({ name: 'Ten', code: 'TEN', percentage: '10', productFamilyId: familyId });
  const offer = await acme.offers.create({ name: 'Pro deal', handle: 'pro-deal', productId, coupons: ['TEN'] });
  return { productId, offerId: offer.offer.id };
}

async function signup(f: HttpFixture, fields: Record<string, unknown>): Promise<SubscriptionBody> {
  const reply = await f.as('acme', {
    method: 'POST',
    path: '/subscriptions.json',
    json: { subscription: { customer_attributes: customer(), credit_card_attributes: CARD, ...fields } },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.json<{ subscription: SubscriptionBody }>().subscription;
}

const read = async (f: HttpFixture, id: number) =>
  (await f.as('acme', { path: `/subscriptions/${id}.json` })).json<{ subscription: SubscriptionBody }>().subscription;

describe('subscription leftovers over HTTP', () => {
  const fixture = useHttpFixture();

  it('serves offer_id on every read: the offer a signup named (by id or handle), null without one', async () => {
    const f = fixture();
    const { offerId } = await seed(f);
    const byId = await signup(f, { offer_id: offerId });
    const byHandle = await signup(f, { offer_id: 'handle:pro-deal' });
    const plain = await signup(f, { product_handle: 'pro', coupon_code: 'TEN' });
    expect([byId.offer_id, byHandle.offer_id, plain.offer_id]).toEqual([offerId, offerId, null]);
    expect((await read(f, byId.id)).offer_id).toBe(offerId);
    expect((await read(f, plain.id)).offer_id).toBeNull();
    const list = await f.as('acme', { path: '/subscriptions.json?direction=asc' });
    expect(list.json<{ subscription: SubscriptionBody }[]>().map((item) => item.subscription.offer_id)).toEqual([
      offerId,
      offerId,
      null,
    ]);
    // A refused signup with an offer leaves nothing (and no offer recorded anywhere).
    const refused = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: {
        subscription: {
          offer_id: offerId,
          product_handle: 'pro',
          customer_attributes: customer(),
          credit_card_attributes: CARD,
        },
      },
    });
    expect(refused.status).toBe(422);
    expect(refused.json()).toEqual({
      errors: ['Product handle: cannot be given with an offer, which sets the product.'],
    });
    expect((await f.as('acme', { path: '/subscriptions.json' })).json<unknown[]>()).toHaveLength(3);
  });

  it('serves prepayment_balance_in_cents as the account balances show it, and no prepaid_dunning', async () => {
    const f = fixture();
    await seed(f);
    const prepaid = await signup(f, {
      product_handle: 'pro',
      payment_collection_method: 'prepaid',
      prepaid_configuration: { initial_funding_amount_in_cents: 5000 },
    });
    // 50.00 funded, 10.00 of it paid the first period.
    expect(prepaid.prepayment_balance_in_cents).toBe(4000);
    expect('prepaid_dunning' in prepaid).toBe(false);
    const balances = await f.as('acme', { path: `/subscriptions/${prepaid.id}/account_balances.json` });
    expect(balances.json()).toMatchObject({ prepayments: { balance_in_cents: 4000 } });
    const prepayments = await f.as('acme', { path: `/subscriptions/${prepaid.id}/prepayments.json` });
    expect(prepayments.json<{ prepayments: { remaining_amount_in_cents: number }[] }>().prepayments).toMatchObject([
      { remaining_amount_in_cents: 4000 },
    ]);

    const automatic = await signup(f, { product_handle: 'pro' });
    expect(automatic.prepayment_balance_in_cents).toBe(0);
    const recorded = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${automatic.id}/prepayments.json`,
      json: { prepayment: { amount: '25', memo: 'Wire', details: 'REF-1', method: 'ach' } },
    });
    expect(recorded.status, recorded.text).toBe(201);
    expect((await read(f, automatic.id)).prepayment_balance_in_cents).toBe(2500);
    const list = await f.as('acme', { path: '/subscriptions.json?direction=asc' });
    expect(
      list.json<{ subscription: SubscriptionBody }[]>().map((item) => item.subscription.prepayment_balance_in_cents),
    ).toEqual([4000, 2500]);
  });

  it("purges a subscription's custom price point: its read is a 404 and it leaves the custom list", async () => {
    const f = fixture();
    const { productId } = await seed(f);
    const custom = (handle: string) => ({ handle, price_in_cents: 700, interval: 1, interval_unit: 'month' });
    const own = await signup(f, { product_handle: 'pro', custom_price: custom('mine') });
    const other = await signup(f, { product_handle: 'pro', custom_price: custom('theirs') });
    const pricePointPath = (id: number) => `/products/${productId}/price_points/${id}.json`;
    expect((await f.as('acme', { path: pricePointPath(own.product_price_point_id) })).status).toBe(200);

    const purged = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${own.id}/purge.json?ack=${own.customer.id}`,
    });
    expect(purged.status, purged.text).toBe(200);
    expect((await f.as('acme', { path: pricePointPath(own.product_price_point_id) })).status).toBe(404);
    expect((await f.as('acme', { path: pricePointPath(other.product_price_point_id) })).status).toBe(200);
    const listed = await f.as('acme', { path: `/products/${productId}/price_points.json?filter[type]=custom` });
    expect(listed.json<{ price_points: { handle: string }[] }>().price_points.map((p) => p.handle)).toEqual(['theirs']);
    // The handle is free for the next custom price.
    const again = await signup(f, { product_handle: 'pro', custom_price: custom('mine') });
    expect(again.product_price_point_id).not.toBe(own.product_price_point_id);
  });
});

describe('official Maxio SDK: offer_id, prepayment balance and purge of custom price points', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('reads offerId and prepaymentBalanceInCents through the SDK, and purges a custom price point', async () => {
    const f = fixture();
    const { productId, offerId } = await seed(f);
    const c = acmeClient(f);
    const subscriptions = new SubscriptionsController(c);
    const create = (fields: Record<string, unknown>) =>
      sdk(
        subscriptions.createSubscription({
          subscription: {
            customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: `sdk${++emails}@example.com` },
            creditCardAttributes: SDK_CARD,
            ...fields,
          },
        }),
      );
    const viaOffer = (await create({ offerId: 'handle:pro-deal' })).subscription!;
    expect(viaOffer.offerId).toBe(offerId);
    expect(viaOffer.prepaymentBalanceInCents).toBe(0n);
    const prepaid = (
      await create({
        productHandle: 'pro',
        paymentCollectionMethod: CollectionMethod.Prepaid,
        prepaidConfiguration: { initialFundingAmountInCents: 5000n },
      })
    ).subscription!;
    expect(prepaid.offerId).toBeNull();
    expect(prepaid.prepaymentBalanceInCents).toBe(4000n);
    const readBack = (await sdk(subscriptions.readSubscription(prepaid.id!))).subscription!;
    expect([readBack.prepaymentBalanceInCents, readBack.offerId, readBack.prepaidDunning]).toEqual([
      4000n,
      null,
      undefined,
    ]);
    const listed = await sdk(subscriptions.listSubscriptions({ direction: 'asc' } as never));
    expect(listed.map((item) => [item.subscription?.offerId, item.subscription?.prepaymentBalanceInCents])).toEqual([
      [offerId, 0n],
      [null, 4000n],
    ]);

    const custom = (
      await create({
        productHandle: 'pro',
        customPrice: { handle: 'mine', priceInCents: 700n, interval: 1, intervalUnit: IntervalUnit.Month },
      })
    ).subscription!;
    expect(custom.productPricePointType).toBe(PricePointType.Custom);
    const points = new ProductPricePointsController(c);
    const pricePointId = custom.productPricePointId as number;
    expect((await sdk(points.readProductPricePoint(productId, pricePointId))).pricePoint.subscriptionId).toBe(
      custom.id,
    );
    const purged = await sdk(
      subscriptions.purgeSubscription(custom.id!, custom.customer!.id!, [SubscriptionPurgeType.Customer]),
    );
    expect(purged.subscription?.id).toBe(custom.id);
    expect((await sdkFailure(points.readProductPricePoint(productId, pricePointId))).status).toBe(404);
    const customs = await sdk(points.listProductPricePoints({ productId, filterType: [PricePointType.Custom] }));
    expect(customs.pricePoints).toEqual([]);
  });
});
