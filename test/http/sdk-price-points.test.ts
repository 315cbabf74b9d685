import {
  IncludeNullOrNotNull,
  IntervalUnit,
  PricePointType,
  ProductPricePointsController,
  ProductsController,
  SubscriptionProductsController,
  SubscriptionsController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk, sdkBasicProduct, sdkFailure } from './support/maxio-sdk.js';

/**
 * The official Maxio SDK driving the product price point endpoints against the server in
 * `chargify` compat; every response is validated by the SDK's own schemas.
 */

describe('official Maxio SDK: product price points', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('creates, lists, reads, updates, archives, unarchives and promotes price points', async () => {
    const f = fixture();
    const c = acmeClient(f);
    const productId = await sdkBasicProduct(c);
    const points = new ProductPricePointsController(c);

    const product = await sdk(new ProductsController(c).readProduct(productId));
    expect(product.product.productPricePointHandle).toBe('original');
    const defaultId = product.product.defaultProductPricePointId as number;
    expect(product.product.productPricePointId).toBe(defaultId);

    const created = await sdk(
      points.createProductPricePoint(String(productId), {
        pricePoint: {
          name: 'Annual',
          handle: 'annual',
          priceInCents: BigInt(10000),
          interval: 12,
          intervalUnit: IntervalUnit.Month,
          trialInterval: 7,
          trialIntervalUnit: IntervalUnit.Day,
          trialPriceInCents: BigInt(0),
        },
      }),
    );
    expect(created.pricePoint).toMatchObject({
      name: 'Annual',
      handle: 'annual',
      priceInCents: BigInt(10000),
      interval: 12,
      type: PricePointType.Catalog,
      productId,
      trialInterval: 7,
      archivedAt: null,
    });
    const annualId = created.pricePoint.id as number;

    const bulk = await sdk(
      points.bulkCreateProductPricePoints(productId, {
        pricePoints: [
          {
            name: 'Quarterly',
            handle: 'quarterly',
            priceInCents: BigInt(2700),
            interval: 3,
            intervalUnit: IntervalUnit.Month,
          },
          { name: 'Weekly', handle: 'weekly', priceInCents: BigInt(300), interval: 7, intervalUnit: IntervalUnit.Day },
        ],
      }),
    );
    expect(bulk.pricePoints?.map((p) => p.handle)).toEqual(['quarterly', 'weekly']);

    const listed = await sdk(points.listProductPricePoints({ productId }));
    expect(listed.pricePoints.map((p) => p.handle)).toEqual(['original', 'annual', 'quarterly', 'weekly']);
    const catalogOnly = await sdk(
      points.listProductPricePoints({ productId: 'handle:basic', filterType: [PricePointType.Default] }),
    );
    expect(catalogOnly.pricePoints.map((p) => p.id)).toEqual([defaultId]);

    expect((await sdk(points.readProductPricePoint('handle:basic', 'handle:annual'))).pricePoint.id).toBe(annualId);
    const updated = await sdk(
      points.updateProductPricePoint(productId, annualId, { pricePoint: { priceInCents: BigInt(9000) } }),
    );
    expect(updated.pricePoint.priceInCents).toBe(BigInt(9000));

    const refused = await sdkFailure(points.archiveProductPricePoint(productId, defaultId));
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      errors: { price_point: ['Price point: the default price point cannot be archived.'] },
    });
    const weeklyId = bulk.pricePoints?.[1]?.id as number;
    const archived = await sdk(points.archiveProductPricePoint(productId, weeklyId));
    expect(archived.pricePoint.archivedAt).not.toBeNull();
    expect((await sdk(points.listProductPricePoints({ productId }))).pricePoints).toHaveLength(3);
    expect((await sdk(points.listProductPricePoints({ productId, archived: true }))).pricePoints).toHaveLength(4);
    const all = await sdk(points.listAllProductPricePoints({ filter: { archivedAt: IncludeNullOrNotNull.NotNull } }));
    expect(all.pricePoints.map((p) => p.handle)).toEqual(['weekly']);
    const unarchived = await sdk(points.unarchiveProductPricePoint(productId, archived.pricePoint.id as number));
    expect(unarchived.pricePoint.archivedAt).toBeNull();

    const promoted = await sdk(points.promoteProductPricePointToDefault(productId, annualId));
    expect(promoted.product).toMatchObject({
      priceInCents: BigInt(9000),
      interval: 12,
      defaultProductPricePointId: annualId,
      productPricePointHandle: 'annual',
    });
    const byType = await sdk(points.listAllProductPricePoints({ filter: { type: [PricePointType.Default] } }));
    expect(byType.pricePoints.map((p) => p.id)).toEqual([annualId]);

    const invalid = await sdkFailure(
      points.createProductPricePoint(String(productId), {
        pricePoint: { name: 'Bad', priceInCents: BigInt(-5), interval: 0, intervalUnit: IntervalUnit.Month },
      }),
    );
    expect(invalid.status).toBe(422);
    expect(Object.keys((invalid.body as { errors: Record<string, unknown> }).errors).sort()).toEqual([
      'interval',
      'price_in_cents',
    ]);
  });

  it('migrates a subscription onto a price point by handle, and refuses an archived one', async () => {
    const f = fixture();
    const c = acmeClient(f);
    const productId = await sdkBasicProduct(c);
    const points = new ProductPricePointsController(c);
    const saver = await sdk(
      points.createProductPricePoint(String(productId), {
        pricePoint: {
          name: 'Saver',
          handle: 'saver',
          priceInCents: BigInt(700),
          interval: 1,
          intervalUnit: IntervalUnit.Month,
        },
      }),
    );
    const created = await sdk(
      new SubscriptionsController(c).createSubscription({
        subscription: {
          productHandle: 'basic',
          customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
          creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
        },
      }),
    );
    const id = created.subscription?.id as number;
    const migrations = new SubscriptionProductsController(c);
    await sdk(points.archiveProductPricePoint(productId, saver.pricePoint.id as number));
    const refused = await sdkFailure(
      migrations.migrateSubscriptionProduct(id, { migration: { productId, productPricePointHandle: 'saver' } }),
    );
    expect(refused.status).toBe(422);
    await sdk(points.unarchiveProductPricePoint(productId, saver.pricePoint.id as number));
    const moved = await sdk(
      migrations.migrateSubscriptionProduct(id, { migration: { productId, productPricePointHandle: 'saver' } }),
    );
    expect(moved.subscription?.productPriceInCents).toBe(BigInt(700));
  });
});
