import {
  type Client,
  ComponentPricePointsController,
  ComponentsController,
  IncludeNullOrNotNull,
  IntervalUnit,
  PricePointType,
  PricingScheme,
  ProductFamiliesController,
  ProductsController,
  SubscriptionComponentsController,
  SubscriptionsController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk, sdkFailure } from './support/maxio-sdk.js';

/**
 * The official Maxio SDK driving the component price point endpoints, the subscription price point
 * moves and allocations on a price point, against the server in `chargify` compat; every response
 * is validated by the SDK's own schemas.
 */

/** A family with a 10.00-a-month product `basic` and a Seats component at 5.00 a seat; answers the component's id. */
async function catalog(c: Client): Promise<number> {
  const family = await sdk(
    new ProductFamiliesController(c).createProductFamily({ productFamily: { name: 'Plans', handle: 'plans' } }),
  );
  const familyId = family.productFamily?.id as number;
  await sdk(
    new ProductsController(c).createProduct(String(familyId), {
      product: {
        name: 'Basic',
        handle: 'basic',
        description: 'Basic',
        priceInCents: BigInt(1000),
        interval: 1,
        intervalUnit: IntervalUnit.Month,
      },
    }),
  );
  const component = await sdk(
    new ComponentsController(c).createQuantityBasedComponent(String(familyId), {
      quantityBasedComponent: {
        name: 'Seats',
        unitName: 'seat',
        pricingScheme: PricingScheme.PerUnit,
        unitPrice: '5',
        handle: 'seats',
      },
    }),
  );
  return component.component.id as number;
}

async function signup(c: Client): Promise<number> {
  const created = await sdk(
    new SubscriptionsController(c).createSubscription({
      subscription: {
        productHandle: 'basic',
        customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
        creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
      },
    }),
  );
  return created.subscription?.id as number;
}

describe('official Maxio SDK: component price points', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('creates, lists, reads, updates, archives, unarchives and promotes component price points', async () => {
    const c = acmeClient(fixture());
    const componentId = await catalog(c);
    const points = new ComponentPricePointsController(c);
    const components = new ComponentsController(c);

    const component = await sdk(components.findComponent('seats'));
    const defaultId = component.component.defaultPricePointId as number;
    expect(component.component.defaultPricePointName).toBe('Original');
    expect(component.component.pricePointCount).toBe(1);

    const created = await sdk(
      points.createComponentPricePoint(componentId, {
        pricePoint: {
          name: 'Volume',
          handle: 'volume',
          pricingScheme: PricingScheme.Volume,
          prices: [
            { startingQuantity: 1, endingQuantity: 10, unitPrice: '4' },
            { startingQuantity: 11, unitPrice: '3.5' },
          ],
        },
      }),
    );
    const volumeId = created.pricePoint.id as number;
    expect(created.pricePoint).toMatchObject({
      name: 'Volume',
      handle: 'volume',
      type: PricePointType.Catalog,
      mDefault: false,
      pricingScheme: PricingScheme.Volume,
      componentId,
    });
    expect(created.pricePoint.prices?.map((p) => [p.startingQuantity, p.endingQuantity, p.unitPrice])).toEqual([
      [1, 10, '4.00'],
      [11, null, '3.50'],
    ]);

    const bulk = await sdk(
      points.bulkCreateComponentPricePoints(String(componentId), {
        pricePoints: [
          { name: 'Cheap', pricingScheme: PricingScheme.PerUnit, prices: [{ startingQuantity: 1, unitPrice: '1' }] },
          { name: 'Dear', pricingScheme: PricingScheme.PerUnit, prices: [{ startingQuantity: 1, unitPrice: '9' }] },
        ],
      }),
    );
    expect(bulk.pricePoints?.map((p) => p.handle)).toEqual(['cheap', 'dear']);

    const listed = await sdk(points.listComponentPricePoints({ componentId, filterType: [PricePointType.Catalog] }));
    expect(listed.pricePoints?.map((p) => p.handle)).toEqual(['volume', 'cheap', 'dear']);

    const read = await sdk(points.readComponentPricePoint(componentId, volumeId));
    expect(read.pricePoint.name).toBe('Volume');
    const byHandle = await sdk(points.readComponentPricePoint('handle:seats', 'handle:volume'));
    expect(byHandle.pricePoint.id).toBe(volumeId);

    const updated = await sdk(
      points.updateComponentPricePoint(componentId, volumeId, {
        pricePoint: {
          name: 'Bulk',
          prices: [{ startingQuantity: 1, unitPrice: '4.5' }],
          pricingScheme: PricingScheme.PerUnit,
        },
      }),
    );
    expect([
      updated.pricePoint.name,
      updated.pricePoint.pricingScheme,
      updated.pricePoint.prices?.[0]?.unitPrice,
    ]).toEqual(['Bulk', PricingScheme.PerUnit, '4.50']);

    const archived = await sdk(points.archiveComponentPricePoint(componentId, bulk.pricePoints?.[1]?.id as number));
    expect(archived.pricePoint.archivedAt).toBeTruthy();
    const all = await sdk(points.listAllComponentPricePoints({ filter: { archivedAt: IncludeNullOrNotNull.NotNull } }));
    expect(all.pricePoints.map((p) => p.handle)).toEqual(['dear']);
    const unarchived = await sdk(points.unarchiveComponentPricePoint(componentId, bulk.pricePoints?.[1]?.id as number));
    expect(unarchived.pricePoint.archivedAt).toBeNull();

    const promoted = await sdk(points.promoteComponentPricePointToDefault(componentId, volumeId));
    expect(promoted.component.defaultPricePointId).toBe(volumeId);
    expect(promoted.component.unitPrice).toBe('4.50');
    const old = await sdk(points.readComponentPricePoint(componentId, defaultId));
    expect(old.pricePoint.type).toBe(PricePointType.Catalog);
  });

  it('refuses bad pricing, an unknown price point and archiving the default, changing nothing', async () => {
    const c = acmeClient(fixture());
    const componentId = await catalog(c);
    const points = new ComponentPricePointsController(c);
    const badPricing = await sdkFailure(
      points.createComponentPricePoint(componentId, {
        pricePoint: {
          name: 'Broken',
          pricingScheme: PricingScheme.Tiered,
          prices: [
            { startingQuantity: 1, endingQuantity: 5, unitPrice: '1' },
            { startingQuantity: 9, unitPrice: '1' },
          ],
        },
      }),
    );
    expect(badPricing).toEqual({ status: 422, body: { errors: { prices: ['Prices: must not have gaps.'] } } });
    expect(await sdkFailure(points.readComponentPricePoint(componentId, 999999))).toMatchObject({ status: 404 });
    const component = await sdk(new ComponentsController(c).findComponent('seats'));
    const defaultArchive = await sdkFailure(
      points.archiveComponentPricePoint(componentId, component.component.defaultPricePointId as number),
    );
    expect(defaultArchive).toEqual({
      status: 422,
      body: { errors: ['Price point: the default price point cannot be archived.'] },
    });
    const listed = await sdk(points.listComponentPricePoints({ componentId }));
    expect(listed.pricePoints?.map((p) => [p.handle, p.archivedAt])).toEqual([['original', null]]);
  });

  it('allocates at a price point, moves a subscription between price points and resets it', async () => {
    const c = acmeClient(fixture());
    const componentId = await catalog(c);
    const subscriptionId = await signup(c);
    const points = new ComponentPricePointsController(c);
    const subscriptionComponents = new SubscriptionComponentsController(c);
    const premium = await sdk(
      points.createComponentPricePoint(componentId, {
        pricePoint: {
          name: 'Premium',
          handle: 'premium',
          pricingScheme: PricingScheme.PerUnit,
          prices: [{ startingQuantity: 1, unitPrice: '8' }],
        },
      }),
    );
    const premiumId = premium.pricePoint.id as number;

    const unknown = await sdkFailure(
      subscriptionComponents.allocateComponent(subscriptionId, componentId, {
        allocation: { quantity: 2, pricePointId: 999999 },
      }),
    );
    expect(unknown.status).toBe(404);
    // A whole period is left at signup: 2 seats at 8.00.
    const allocation = await sdk(
      subscriptionComponents.allocateComponent(subscriptionId, componentId, {
        allocation: { quantity: 2, pricePointId: premiumId, accrueCharge: true },
      }),
    );
    expect([allocation.allocation?.pricePointId, allocation.allocation?.pricePointHandle]).toEqual([
      premiumId,
      'premium',
    ]);
    const afterAllocation = await sdk(subscriptionComponents.readSubscriptionComponent(subscriptionId, componentId));
    expect(afterAllocation.component).toMatchObject({
      allocatedQuantity: 2,
      pricePointId: premiumId,
      pricePointHandle: 'premium',
      pricePointType: PricePointType.Catalog,
      pricePointName: 'Premium',
    });

    const reset = await sdk(subscriptionComponents.bulkResetSubscriptionComponentsPricePoints(subscriptionId));
    expect(reset.subscription?.id).toBe(subscriptionId);
    const afterReset = await sdk(subscriptionComponents.listSubscriptionComponents({ subscriptionId }));
    expect(afterReset.map((x) => [x.component?.pricePointHandle, x.component?.pricePointType])).toEqual([
      ['original', PricePointType.Default],
    ]);

    const moved = await sdk(
      subscriptionComponents.bulkUpdateSubscriptionComponentsPricePoints(subscriptionId, {
        components: [{ componentId, pricePoint: 'premium' }],
      }),
    );
    expect(moved.components).toEqual([{ componentId, pricePoint: premiumId }]);
    const afterMove = await sdk(subscriptionComponents.readSubscriptionComponent(subscriptionId, componentId));
    expect(afterMove.component?.pricePointId).toBe(premiumId);

    await sdk(points.archiveComponentPricePoint(componentId, premiumId));
    const archivedAllocation = await sdkFailure(
      subscriptionComponents.allocateComponent(subscriptionId, componentId, {
        allocation: { quantity: 3, pricePointId: premiumId },
      }),
    );
    expect(archivedAllocation).toEqual({
      status: 422,
      body: {
        errors: [
          {
            kind: 'allocation',
            component_id: componentId,
            on: 'price_point_id',
            message: "Price point: 'premium' has been archived.",
          },
        ],
      },
    });
    const refused = await sdkFailure(
      subscriptionComponents.bulkUpdateSubscriptionComponentsPricePoints(subscriptionId, {
        components: [{ componentId, pricePoint: 'nope' }],
      }),
    );
    expect(refused).toEqual({
      status: 422,
      body: {
        errors: [
          {
            component_id: componentId,
            price_point: 'nope',
            message: 'Price point: nope is not a price point of this component.',
          },
        ],
      },
    });
  });

  it('signs up with a component at the price point it names', async () => {
    const c = acmeClient(fixture());
    const componentId = await catalog(c);
    const premium = await sdk(
      new ComponentPricePointsController(c).createComponentPricePoint(componentId, {
        pricePoint: {
          name: 'Premium',
          handle: 'premium',
          pricingScheme: PricingScheme.PerUnit,
          prices: [{ startingQuantity: 1, unitPrice: '8' }],
        },
      }),
    );
    const created = await sdk(
      new SubscriptionsController(c).createSubscription({
        subscription: {
          productHandle: 'basic',
          customerAttributes: { firstName: 'Bo', lastName: 'Brandt', email: 'bo@example.com' },
          creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
          components: [{ componentId, allocatedQuantity: 3, pricePointId: 'handle:premium' }],
        },
      }),
    );
    const subscriptionId = created.subscription?.id as number;
    const read = await sdk(
      new SubscriptionComponentsController(c).readSubscriptionComponent(subscriptionId, componentId),
    );
    expect(read.component).toMatchObject({ allocatedQuantity: 3, pricePointId: premium.pricePoint.id });
    // The signup took the product (10.00) and three seats at 8.00.
    expect(created.subscription?.signupRevenue).toBe('34.00');
  });
});
