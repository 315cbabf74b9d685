import { OffersController, SubscriptionsController } from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk, sdkFailure } from './support/maxio-sdk.js';

/**
 * Offers through the official Maxio SDK 6.1.0 in `chargify` compat: every `OffersController`
 * method, and `createSubscription` with `offerId`, each answer parsed by the SDK's own schemas.
 */

const CARD = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/** `pro` (10.00 a month) with component Seats (4.00 a seat) and coupon TENOFF (10%). */
async function seed(f: HttpFixture): Promise<{ productId: number; seatsId: number; couponId: number }> {
  const { familyId, productId } = await seedCatalog(f.engine);
  const acme = f.engine.site('acme');
  const seats = await acme.components.create(familyId, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '4',
  });
  const coupon = await acme.coupons.create({
    name: 'Ten off',
    code: 'TENOFF',
    percentage: '10',
    productFamilyId: familyId,
  });
  return { productId, seatsId: seats.component.id, couponId: coupon.id };
}

/** A subscription's ledger lines (read from the engine: the SDK has no transaction list), without ids and times. */
async function charges(f: HttpFixture, subscriptionId: number): Promise<[string, string | null, number][]> {
  const rows = await f.engine.site('acme').subscriptions.transactions(subscriptionId);
  return rows.map((t) => [t.type, t.kind, t.amountInCents]);
}

describe('official Maxio SDK 6.1.0: offers', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('creates, lists, reads, archives and unarchives an offer, and signs up with it', async () => {
    const f = fixture();
    const { productId, seatsId, couponId } = await seed(f);
    const c = acmeClient(f);
    const offers = new OffersController(c);

    const created = await sdk(
      offers.createOffer({
        offer: {
          name: 'Pro with seats',
          handle: 'pro-seats',
          description: 'Pro and three seats',
          productId,
          components: [{ componentId: seatsId, startingQuantity: 3 }],
          coupons: ['TENOFF'],
        },
      }),
    );
    const offer = created.offer!;
    expect(offer).toMatchObject({
      name: 'Pro with seats',
      handle: 'pro-seats',
      description: 'Pro and three seats',
      productId,
      productName: 'Pro',
      productFamilyName: 'Acme Projects',
      productPricePointName: 'Original',
      productPriceInCents: 1000n,
      archivedAt: null,
    });
    expect(offer.offerItems).toMatchObject([
      { componentId: seatsId, componentName: 'Seats', startingQuantity: '3.0', pricePointName: 'Original' },
    ]);
    expect(offer.offerDiscounts).toEqual([{ couponCode: 'TENOFF', couponId, couponName: 'Ten off' }]);
    const id = offer.id!;

    expect((await sdk(offers.readOffer(id))).offer).toEqual(offer);
    expect((await sdk(offers.listOffers({}))).offers!.map((o) => o.id)).toEqual([id]);

    await sdk(offers.archiveOffer(id));
    expect((await sdk(offers.readOffer(id))).offer!.archivedAt).toEqual(expect.any(String));
    expect((await sdk(offers.listOffers({}))).offers).toEqual([]);
    expect((await sdk(offers.listOffers({ includeArchived: true }))).offers!.map((o) => o.id)).toEqual([id]);

    // An archived offer cannot be signed up to.
    const subscriptions = new SubscriptionsController(c);
    const signup = (offerId: number | string, email: string) =>
      subscriptions.createSubscription({
        subscription: {
          offerId,
          customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email },
          creditCardAttributes: CARD,
        },
      });
    const refused = await sdkFailure(signup(id, 'ada@example.com'));
    expect(refused).toEqual({
      status: 422,
      body: { errors: ['Offer: has been archived and cannot be subscribed to.'] },
    });

    await sdk(offers.unarchiveOffer(id));
    expect((await sdk(offers.readOffer(id))).offer!.archivedAt).toBeNull();

    const viaOffer = (await sdk(signup(id, 'ada@example.com'))).subscription!;
    expect(viaOffer.product?.handle).toBe('pro');
    expect(viaOffer.couponCodes).toEqual(['TENOFF']);
    const byHandle = (await sdk(signup('handle:pro-seats', 'grace@example.com'))).subscription!;
    const explicit = (
      await sdk(
        subscriptions.createSubscription({
          subscription: {
            productHandle: 'pro',
            components: [{ componentId: seatsId, allocatedQuantity: 3 }],
            couponCode: 'TENOFF',
            customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: 'explicit@example.com' },
            creditCardAttributes: CARD,
          },
        }),
      )
    ).subscription!;
    // 10.00 + 3 seats at 4.00 = 22.00, less 10%: the same as the explicit signup.
    const billed = await charges(f, viaOffer.id!);
    expect(billed).toEqual(await charges(f, explicit.id!));
    expect(await charges(f, byHandle.id!)).toEqual(billed);
    expect(billed.filter(([type]) => type === 'payment').map(([, , amount]) => amount)).toEqual([1980]);
  });

  it('refuses a bad offer with the attributes named, and an unknown offer id on signup', async () => {
    const f = fixture();
    const { productId } = await seed(f);
    const c = acmeClient(f);
    const offers = new OffersController(c);
    const bad = await sdkFailure(
      offers.createOffer({
        offer: {
          name: 'X',
          handle: 'Bad Handle',
          productId,
          components: [{ componentId: 999_999 }],
          coupons: ['NOPE'],
        },
      }),
    );
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({
      errors: [
        'API Handle: must start with a letter or number and may only contain lowercase letters, numbers, underscores and dashes.',
        "Component: '999999' does not exist.",
        "Coupon Code: 'NOPE' - Coupon code could not be found.",
      ],
    });
    expect((await sdk(offers.listOffers({ includeArchived: true }))).offers).toEqual([]);
    const missing = await sdkFailure(offers.readOffer(999_999));
    expect(missing.status).toBe(404);

    const unknown = await sdkFailure(
      new SubscriptionsController(c).createSubscription({
        subscription: {
          offerId: 999_999,
          customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
          creditCardAttributes: CARD,
        },
      }),
    );
    expect(unknown).toEqual({ status: 422, body: { errors: ["Offer: '999999' does not exist for this site."] } });
  });
});
