import { type Client, InsightsController, SortingDirection } from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { maxioClient, sdk, sdkFailure } from './support/maxio-sdk.js';

/**
 * MRR movements through the official Maxio SDK (`InsightsController.listMrrMovements`) in
 * `chargify` compat: every response is validated by the SDK's `ListMRRResponse` schema.
 */

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

function client(f: HttpFixture, site: 'acme' | 'globex' = 'acme'): Client {
  return maxioClient({ port: f.port, site, apiKey: f.keys[site] });
}

describe('official Maxio SDK 6.1.0: MRR movements', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('lists the movements of signups, an allocation and a cancellation, by subscription and page', async () => {
    const f = fixture();
    const { familyId, productId } = await seedCatalog(f.engine);
    const acme = f.engine.site('acme');
    const seats = await acme.components.create(familyId, {
      name: 'Seats',
      kind: 'quantity_based',
      unitName: 'seat',
      handle: 'seats',
      unitPrice: '2.5',
    });
    const subscribe = async (email: string) =>
      (
        await acme.subscriptions.create({
          productHandle: 'pro',
          customer: { firstName: 'Ada', lastName: 'Lovelace', email },
          creditCard: VISA,
        })
      ).subscription;
    const a = await subscribe('a@example.com');
    const b = await subscribe('b@example.com');
    await acme.allocations.allocate(a.id, seats.component.id, { quantity: 2 });
    await acme.subscriptions.cancel(b.id, {});

    const insights = new InsightsController(client(f));
    const all = await sdk(insights.listMrrMovements({}));
    expect(all.mrr).toMatchObject({ page: 1, perPage: 10, totalPages: 1, totalEntries: 4, currency: 'USD' });
    expect(all.mrr.movements?.map((m) => [m.subscriptionId, m.category, m.amountInCents])).toEqual([
      [b.id, 'churn', -1000n],
      [a.id, 'expansion', 500n],
      [b.id, 'new_business', 1000n],
      [a.id, 'new_business', 1000n],
    ]);
    const expansion = all.mrr.movements![1]!;
    expect(expansion.breakouts).toMatchObject({ planAmountInCents: 500n, usageAmountInCents: 0n });
    expect(
      expansion.lineItems?.map((l) => [l.productId, l.componentId, l.name, l.mrr, l.quantity, l.prevQuantity]),
    ).toEqual([
      [productId, 0, 'Pro', 1000, 1, 1],
      [productId, seats.component.id, 'Seats', 500, 2, 0],
    ]);
    expect(expansion.lineItems?.[1]?.mrrMovements).toEqual([
      { amount: 500, category: 'expansion', subscriberDelta: 0, leadDelta: 0 },
    ]);

    const ofA = await sdk(
      insights.listMrrMovements({ subscriptionId: a.id, direction: SortingDirection.Asc, page: 1, perPage: 1 }),
    );
    expect(ofA.mrr).toMatchObject({ page: 1, perPage: 1, totalPages: 2, totalEntries: 2 });
    expect(ofA.mrr.movements?.map((m) => m.category)).toEqual(['new_business']);

    // Another site sees none of them.
    const globex = await sdk(new InsightsController(client(f, 'globex')).listMrrMovements({ subscriptionId: a.id }));
    expect(globex.mrr.movements).toEqual([]);
  });

  it('answers a subscription id that is not positive with a 422 in the service error style', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const failure = await sdkFailure(new InsightsController(client(f)).listMrrMovements({ subscriptionId: -3 }));
    expect(failure.status).toBe(422);
    expect(failure.body).toEqual({ errors: [expect.stringContaining('subscription_id')] });
  });
});
