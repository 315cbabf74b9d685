import {
  ApiError,
  type Client,
  CustomFieldsController,
  InsightsController,
  ResourceType,
  SubscriptionComponentsController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { maxioClient, sdk } from './support/maxio-sdk.js';

/**
 * Site statistics, MRR and the site-wide metadata and subscription-component lists through the
 * official Maxio SDK in `chargify` compat: every response is validated by the SDK's schemas.
 */

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

function client(f: HttpFixture, site: 'acme' | 'globex' = 'acme'): Client {
  return maxioClient({ port: f.port, site, apiKey: f.keys[site] });
}

async function status(call: Promise<unknown>): Promise<number> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiError) return error.statusCode;
    throw error;
  }
  throw new Error('expected the SDK call to fail');
}

/** `acme`: product `pro` (10.00 a month), a Seats component (2.50 a seat), two subscriptions (the first with 2 seats). */
async function seed(f: HttpFixture) {
  const { familyId } = await seedCatalog(f.engine);
  const acme = f.engine.site('acme');
  const seats = await acme.components.create(familyId, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '2.5',
  });
  const subscribe = async (email: string, components: unknown[] = []) =>
    (
      await acme.subscriptions.create({
        productHandle: 'pro',
        customer: { firstName: 'Ada', lastName: 'Lovelace', email },
        creditCard: VISA,
        components: components as never,
      })
    ).subscription;
  const first = await subscribe('first@example.com', [{ componentId: seats.component.id, allocatedQuantity: 2 }]);
  const second = await subscribe('second@example.com');
  return { acme, familyId, seats: seats.component.id, first, second };
}

describe('official Maxio SDK 6.1.0: insights and site-wide lists', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('reads site statistics with the site, counts and formatted revenue', async () => {
    const f = fixture();
    await seed(f);
    const insights = new InsightsController(client(f));
    const summary = await sdk(insights.readSiteStats());
    expect(summary).toMatchObject({
      siteId: f.sites.acme.site.id,
      siteCurrency: 'USD',
      stats: {
        totalSubscriptions: 2,
        subscriptionsToday: 2,
        // Signups paid 15.00 (10.00 and two seats) and 10.00.
        totalRevenue: '$25.00',
        revenueToday: '$25.00',
        revenueThisMonth: '$25.00',
        revenueThisYear: '$25.00',
        totalActiveSubscriptions: 2,
        totalCanceledSubscriptions: 0,
        totalPastDueSubscriptions: 0,
        totalUnpaidSubscriptions: 0,
        totalDunningSubscriptions: 0,
      },
    });
    const globex = await sdk(new InsightsController(client(f, 'globex')).readSiteStats());
    expect(globex).toMatchObject({ siteCurrency: 'EUR', stats: { totalSubscriptions: 0, totalRevenue: '€0.00' } });
  });

  it('reads the site MRR and MRR per subscription, filtered and paged', async () => {
    const f = fixture();
    const s = await seed(f);
    const insights = new InsightsController(client(f));
    const site = await sdk(insights.readMrr());
    expect(site.mrr).toMatchObject({
      amountInCents: 2500n,
      amountFormatted: '$25.00',
      currency: 'USD',
      currencySymbol: '$',
      breakouts: { planAmountInCents: 2500n, usageAmountInCents: 0n, planAmountFormatted: '$25.00' },
      atTime: '2026-01-15T07:00:00-05:00',
    });
    expect((await sdk(insights.readMrr(undefined, s.second.id))).mrr.amountInCents).toBe(1000n);
    expect((await sdk(insights.readMrr('2026-01-15T09:30:00-05:00'))).mrr.amountInCents).toBe(2500n);
    // An earlier day is refused rather than answered with today's figure.
    expect(await status(insights.readMrr('2026-01-10T00:00:00Z'))).toBe(422);

    const all = await sdk(insights.listMrrPerSubscription({}));
    expect(all.subscriptionsMrr).toEqual([
      {
        subscriptionId: s.first.id,
        mrrAmountInCents: 1500n,
        breakouts: { planAmountInCents: 1500n, usageAmountInCents: 0n },
      },
      {
        subscriptionId: s.second.id,
        mrrAmountInCents: 1000n,
        breakouts: { planAmountInCents: 1000n, usageAmountInCents: 0n },
      },
    ]);
    const filtered = await sdk(insights.listMrrPerSubscription({ filter: { subscriptionIds: [s.second.id] } }));
    expect(filtered.subscriptionsMrr.map((m) => m.subscriptionId)).toEqual([s.second.id]);
    const paged = await sdk(insights.listMrrPerSubscription({ page: 1, perPage: 1, direction: 'desc' as never }));
    expect(paged.subscriptionsMrr.map((m) => m.subscriptionId)).toEqual([s.second.id]);
    expect(
      (await sdk(new InsightsController(client(f, 'globex')).listMrrPerSubscription({}))).subscriptionsMrr,
    ).toEqual([]);
  });

  it('lists the metadata of every customer and subscription of a resource type', async () => {
    const f = fixture();
    const s = await seed(f);
    await s.acme.metafields.createFields('customers', { name: 'tier' });
    await s.acme.metafields.createFields('subscriptions', { name: 'channel' });
    await s.acme.metafields.setMetadata('customers', s.first.customerId, [{ name: 'tier', value: 'gold' }]);
    await s.acme.metafields.setMetadata('customers', s.second.customerId, [{ name: 'tier', value: 'silver' }]);
    await s.acme.metafields.setMetadata('subscriptions', s.second.id, [{ name: 'channel', value: 'web' }]);
    const fields = new CustomFieldsController(client(f));

    const customers = await sdk(fields.listMetadataForResourceType({ resourceType: ResourceType.Customers }));
    expect(customers).toMatchObject({ totalCount: 2, currentPage: 1, totalPages: 1, perPage: 20 });
    expect(customers.metadata?.map((m) => [m.resourceId, m.name, m.value])).toEqual([
      [s.first.customerId, 'tier', 'gold'],
      [s.second.customerId, 'tier', 'silver'],
    ]);
    const one = await sdk(
      fields.listMetadataForResourceType({ resourceType: ResourceType.Customers, resourceIds: [s.second.customerId] }),
    );
    expect(one.metadata?.map((m) => m.value)).toEqual(['silver']);
    const subscriptions = await sdk(
      fields.listMetadataForResourceType({ resourceType: ResourceType.Subscriptions, perPage: 1, page: 1 }),
    );
    expect(subscriptions).toMatchObject({ totalCount: 1, totalPages: 1, perPage: 1 });
    expect(subscriptions.metadata?.[0]).toMatchObject({ resourceId: s.second.id, name: 'channel', value: 'web' });
  });

  it('lists every subscription component of the site with the filters the SDK sends', async () => {
    const f = fixture();
    const s = await seed(f);
    await s.acme.allocations.allocate(s.second.id, s.seats, { quantity: 4 });
    const components = new SubscriptionComponentsController(client(f));
    const all = await sdk(components.listSubscriptionComponentsForSite({}));
    expect(all.subscriptionsComponents.map((c) => [c.subscriptionId, c.componentId, c.allocatedQuantity])).toEqual([
      [s.first.id, s.seats, 2],
      [s.second.id, s.seats, 4],
    ]);
    expect(all.subscriptionsComponents[0]).toMatchObject({
      kind: 'quantity_based_component',
      name: 'Seats',
      pricingScheme: 'per_unit',
    });
    const filtered = await sdk(
      components.listSubscriptionComponentsForSite({
        subscriptionIds: [s.second.id],
        productFamilyIds: [s.familyId],
        filter: { currencies: ['USD'], subscription: { states: ['active' as never] } },
        sort: 'updated_at' as never,
        direction: 'desc' as never,
      }),
    );
    expect(filtered.subscriptionsComponents.map((c) => c.subscriptionId)).toEqual([s.second.id]);
    const euro = await sdk(components.listSubscriptionComponentsForSite({ filter: { currencies: ['EUR'] } }));
    expect(euro.subscriptionsComponents).toEqual([]);
    // A filter this server does not apply is refused, not ignored.
    expect(await status(components.listSubscriptionComponentsForSite({ include: 'subscription' as never }))).toBe(422);
    const globex = new SubscriptionComponentsController(client(f, 'globex'));
    expect((await sdk(globex.listSubscriptionComponentsForSite({}))).subscriptionsComponents).toEqual([]);
  });
});
