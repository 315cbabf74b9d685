import assert from 'node:assert/strict';
import type { ComponentPricing } from '../../ports/storage.js';
import { seedBillingSite, termsFixture } from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

/** A per-unit pricing at `unitPrice`. */
function perUnit(unitPrice: string): ComponentPricing {
  return { scheme: 'per_unit', brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice }] };
}

/**
 * Cases for the price-points repository: the default price point made with a product (and with a
 * component), price points whose terms are versions numbered after the product's (component's)
 * highest, revisions, archiving, promotion to default, handles unique per product (component),
 * the price point of a component version, tenancy and rollback.
 */
export function pricePointCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('price points', () => {
    it('gives a product a default price point and versions price points after the product’s highest', async () => {
      const seed = await seedBillingSite(storage(), 'pp-ins');
      const { site, product } = seed;
      await storage().transaction(async (tx) => {
        const original = await tx.pricePoints.findDefaultProductPricePoint(site.id, product.id);
        assert.ok(original);
        assert.deepEqual(
          { name: original.name, handle: original.handle, type: original.type, version: original.version },
          { name: 'Original', handle: 'original', type: 'default', version: 1 },
        );
        assert.equal((await tx.catalog.findProductVersion(site.id, product.id, 1))?.pricePointId, original.id);

        const terms = termsFixture({ priceInCents: 9900, interval: 12 });
        const { pricePoint, version } = await tx.pricePoints.insertProductPricePoint(
          {
            siteId: site.id,
            productId: product.id,
            name: 'Annual',
            handle: 'annual',
            archivedAt: null,
            createdAt: at(T0, 1),
            updatedAt: at(T0, 1),
          },
          terms,
        );
        assert.equal(pricePoint.type, 'catalog');
        assert.equal(pricePoint.version, 2);
        assert.deepEqual(version.terms, terms);
        assert.equal(version.pricePointId, pricePoint.id);
        assert.deepEqual(await tx.pricePoints.findProductPricePoint(site.id, pricePoint.id), pricePoint);
        assert.deepEqual(await tx.pricePoints.findProductPricePointByHandle(site.id, product.id, 'annual'), pricePoint);
        assert.equal((await tx.catalog.findProduct(site.id, product.id))?.currentVersion, 1, 'not made current');

        // The product's next version skips the price point's number and stays the default's.
        const next = await tx.catalog.addProductVersion(
          site.id,
          product.id,
          1,
          termsFixture({ priceInCents: 1 }),
          at(T0, 2),
        );
        assert.equal(next?.version.version, 3);
        assert.equal(next?.product.currentVersion, 3);
        assert.equal(next?.version.pricePointId, original.id);
        assert.equal((await tx.pricePoints.findDefaultProductPricePoint(site.id, product.id))?.version, 3);

        await assert.rejects(
          tx.pricePoints.insertProductPricePoint(
            {
              siteId: site.id,
              productId: product.id,
              name: 'Again',
              handle: 'annual',
              archivedAt: null,
              createdAt: T0,
              updatedAt: T0,
            },
            terms,
          ),
          (error: unknown) => (error as { code?: string }).code === 'conflict',
        );
        assert.equal(await tx.pricePoints.findProductPricePoint(site.id + 1000, pricePoint.id), undefined, 'tenancy');
      });
    });

    it('revises, archives, lists and promotes price points', async () => {
      const seed = await seedBillingSite(storage(), 'pp-rev');
      const { site, product } = seed;
      const pp = await storage().transaction(
        async (tx) =>
          (
            await tx.pricePoints.insertProductPricePoint(
              {
                siteId: site.id,
                productId: product.id,
                name: 'Saver',
                handle: 'saver',
                archivedAt: null,
                createdAt: T0,
                updatedAt: T0,
              },
              termsFixture({ priceInCents: 500 }),
            )
          ).pricePoint,
      );
      await storage().transaction(async (tx) => {
        const renamed = await tx.pricePoints.reviseProductPricePoint(
          site.id,
          pp.id,
          { name: 'Thrift' },
          undefined,
          at(T0, 1),
        );
        assert.equal(renamed?.pricePoint.name, 'Thrift');
        assert.equal(renamed?.pricePoint.version, pp.version, 'a rename adds no version');
        const revised = await tx.pricePoints.reviseProductPricePoint(
          site.id,
          pp.id,
          { handle: 'thrift' },
          termsFixture({ priceInCents: 600 }),
          at(T0, 2),
        );
        assert.equal(revised?.pricePoint.version, 3);
        assert.equal(revised?.version.terms.priceInCents, 600);
        assert.equal(
          (await tx.catalog.findProductVersion(site.id, product.id, 2))?.terms.priceInCents,
          500,
          'old terms kept',
        );
        const archived = await tx.pricePoints.setProductPricePointArchived(site.id, pp.id, at(T0, 3), at(T0, 3));
        assert.equal(archived?.archivedAt?.getTime(), at(T0, 3).getTime());
        assert.deepEqual(
          (await tx.pricePoints.listProductPricePoints(site.id, { productId: product.id })).map((p) => p.handle),
          ['original'],
        );
        assert.deepEqual(
          (await tx.pricePoints.listProductPricePoints(site.id, { includeArchived: true })).map((p) => p.handle),
          ['original', 'thrift'],
        );
        assert.deepEqual(
          (await tx.pricePoints.listProductPricePoints(site.id, { onlyArchived: true })).map((p) => p.handle),
          ['thrift'],
        );
        await tx.pricePoints.setProductPricePointArchived(site.id, pp.id, null, at(T0, 4));
        const promoted = await tx.pricePoints.makeDefaultProductPricePoint(site.id, pp.id, at(T0, 5));
        assert.equal(promoted?.pricePoint.type, 'default');
        assert.equal(promoted?.product.currentVersion, 3);
        const types = (await tx.pricePoints.listProductPricePoints(site.id)).map((p) => [p.handle, p.type]);
        assert.deepEqual(types, [
          ['original', 'catalog'],
          ['thrift', 'default'],
        ]);
        // A revision of the default moves the product's current version with it.
        await tx.pricePoints.reviseProductPricePoint(
          site.id,
          pp.id,
          {},
          termsFixture({ priceInCents: 700 }),
          at(T0, 6),
        );
        assert.equal((await tx.catalog.findProduct(site.id, product.id))?.currentVersion, 4);
      });
    });

    it('rolls back a price point with its version', async () => {
      const seed = await seedBillingSite(storage(), 'pp-rb');
      const { site, product } = seed;
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.pricePoints.insertProductPricePoint(
            {
              siteId: site.id,
              productId: product.id,
              name: 'Gone',
              handle: 'gone',
              archivedAt: null,
              createdAt: T0,
              updatedAt: T0,
            },
            termsFixture(),
          );
          throw new Abort();
        }),
        Abort,
      );
      await storage().transaction(async (tx) => {
        assert.equal(await tx.pricePoints.findProductPricePointByHandle(site.id, product.id, 'gone'), undefined);
        assert.equal(await tx.catalog.findProductVersion(site.id, product.id, 2), undefined);
      });
    });
    it('gives a component a default price point and versions component price points after the highest', async () => {
      const { site, product } = await seedBillingSite(storage(), 'cpp-ins');
      await storage().transaction(async (tx) => {
        const { component } = await tx.components.insert(
          {
            siteId: site.id,
            familyId: product.familyId,
            kind: 'quantity_based_component',
            name: 'Seats',
            handle: 'seats',
            unitName: 'seat',
            description: null,
            taxable: false,
            archivedAt: null,
            createdAt: T0,
            updatedAt: T0,
          },
          perUnit('9'),
        );
        const original = await tx.pricePoints.findDefaultComponentPricePoint(site.id, component.id);
        assert.ok(original);
        assert.deepEqual(
          { name: original.name, handle: original.handle, type: original.type, version: original.version },
          { name: 'Original', handle: 'original', type: 'default', version: 1 },
        );
        assert.deepEqual(await tx.pricePoints.findComponentVersionPricePoint(site.id, component.id, 1), original);

        const { pricePoint, version } = await tx.pricePoints.insertComponentPricePoint(
          {
            siteId: site.id,
            componentId: component.id,
            name: 'Premium',
            handle: 'premium',
            archivedAt: null,
            createdAt: at(T0, 1),
            updatedAt: at(T0, 1),
          },
          perUnit('12'),
        );
        assert.deepEqual([pricePoint.type, pricePoint.version, version.version], ['catalog', 2, 2]);
        assert.deepEqual(version.pricing, perUnit('12'));
        assert.deepEqual(await tx.pricePoints.findComponentPricePoint(site.id, pricePoint.id), pricePoint);
        assert.deepEqual(
          await tx.pricePoints.findComponentPricePointByHandle(site.id, component.id, 'premium'),
          pricePoint,
        );
        assert.deepEqual(await tx.pricePoints.findComponentVersionPricePoint(site.id, component.id, 2), pricePoint);
        assert.equal((await tx.components.findById(site.id, component.id))?.currentVersion, 1, 'not made current');

        // The component's next version skips the price point's number and stays the default's.
        const next = await tx.components.addVersion(site.id, component.id, 1, perUnit('10'), at(T0, 2));
        assert.deepEqual([next?.version.version, next?.component.currentVersion], [3, 3]);
        assert.equal((await tx.pricePoints.findDefaultComponentPricePoint(site.id, component.id))?.version, 3);
        assert.equal((await tx.pricePoints.findComponentVersionPricePoint(site.id, component.id, 3))?.id, original.id);
        // A stale expected version still loses.
        assert.equal(await tx.components.addVersion(site.id, component.id, 1, perUnit('11'), at(T0, 3)), undefined);

        await assert.rejects(
          tx.pricePoints.insertComponentPricePoint(
            {
              siteId: site.id,
              componentId: component.id,
              name: 'Again',
              handle: 'premium',
              archivedAt: null,
              createdAt: T0,
              updatedAt: T0,
            },
            perUnit('1'),
          ),
          (error: unknown) => (error as { code?: string }).code === 'conflict',
        );
        assert.equal(await tx.pricePoints.findComponentPricePoint(site.id + 1000, pricePoint.id), undefined, 'tenancy');

        // Revise: new pricing is a new version the price point points at; a rename alone is not.
        const revised = await tx.pricePoints.reviseComponentPricePoint(
          site.id,
          pricePoint.id,
          { name: 'Gold' },
          perUnit('13'),
          at(T0, 4),
        );
        assert.deepEqual(
          [revised?.pricePoint.name, revised?.pricePoint.version, revised?.version.version],
          ['Gold', 4, 4],
        );
        const renamed = await tx.pricePoints.reviseComponentPricePoint(
          site.id,
          pricePoint.id,
          { handle: 'gold' },
          undefined,
          at(T0, 5),
        );
        assert.deepEqual([renamed?.pricePoint.handle, renamed?.version.version], ['gold', 4]);
        await assert.rejects(
          tx.pricePoints.reviseComponentPricePoint(site.id, pricePoint.id, { handle: 'original' }, undefined, T0),
          (error: unknown) => (error as { code?: string }).code === 'conflict',
        );

        const archived = await tx.pricePoints.setComponentPricePointArchived(
          site.id,
          pricePoint.id,
          at(T0, 6),
          at(T0, 6),
        );
        assert.deepEqual(archived?.archivedAt, at(T0, 6));
        assert.deepEqual(
          (await tx.pricePoints.listComponentPricePoints(site.id, { componentId: component.id })).map((p) => p.handle),
          ['original'],
        );
        assert.deepEqual(
          (await tx.pricePoints.listComponentPricePoints(site.id, { onlyArchived: true })).map((p) => p.handle),
          ['gold'],
        );
        await tx.pricePoints.setComponentPricePointArchived(site.id, pricePoint.id, null, at(T0, 7));

        const promoted = await tx.pricePoints.makeDefaultComponentPricePoint(site.id, pricePoint.id, at(T0, 8));
        assert.deepEqual([promoted?.pricePoint.type, promoted?.component.currentVersion], ['default', 4]);
        assert.equal((await tx.pricePoints.findComponentPricePoint(site.id, original.id))?.type, 'catalog');
        assert.equal(
          (await tx.pricePoints.listComponentPricePoints(site.id, { componentId: component.id, includeArchived: true }))
            .length,
          2,
        );
      });
    });
  });
}
