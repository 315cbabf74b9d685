import assert from 'node:assert/strict';
import { familyFixture, isConflict, productFixture, termsFixture } from './billing-fixtures.js';
import { at, newSiteFixture, type SectionContext, T0 } from './harness.js';

/** Terms whose nullable fields are all set, with zeros and `true`s that a lossy codec would turn falsy or drop. */
const FULL_TERMS = termsFixture({
  name: 'Pro',
  description: 'Everything',
  accountingCode: 'ACC-1',
  priceInCents: 4999,
  interval: 14,
  intervalUnit: 'day',
  trialPriceInCents: 0,
  trialInterval: 7,
  trialIntervalUnit: 'day',
  initialChargeInCents: 0,
  initialChargeAfterTrial: true,
  expirationInterval: 12,
  expirationIntervalUnit: 'month',
  requestCreditCard: false,
  requireCreditCard: true,
  taxable: true,
});

/** Cases for product families, products and product versions. */
export function catalogCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('catalog', () => {
    it("inserts families, finds them by id and by handle, and lists a site's families in id order", async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cat-fam-a')),
        await tx.sites.insert(newSiteFixture('cat-fam-b')),
      ]);
      const [zeta, other, alpha] = await storage().transaction(async (tx) => [
        await tx.catalog.insertFamily(familyFixture(a.id, 'zeta', { description: 'Last by name, first by id' })),
        await tx.catalog.insertFamily(familyFixture(b.id, 'other')),
        await tx.catalog.insertFamily(familyFixture(a.id, 'alpha', { createdAt: at(T0, 1), updatedAt: at(T0, 2) })),
      ]);
      assert.ok(zeta && other && alpha);
      assert.ok(Number.isSafeInteger(zeta.id) && zeta.id > 0);
      assert.equal(zeta.description, 'Last by name, first by id');
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.catalog.findFamily(a.id, zeta.id), zeta);
        assert.deepEqual(await tx.catalog.findFamilyByHandle(a.id, 'alpha'), alpha);
        const found = await tx.catalog.findFamily(a.id, alpha.id);
        assert.equal(found?.description, null);
        assert.equal(found?.updatedAt.getTime(), at(T0, 2).getTime(), 'instants keep millisecond precision');
        assert.deepEqual(
          (await tx.catalog.listFamilies(a.id)).map((f) => f.handle),
          ['zeta', 'alpha'],
          "id order, not handle order, and only the site's own",
        );
        assert.equal(await tx.catalog.findFamily(a.id, 987_654), undefined);
        assert.equal(await tx.catalog.findFamilyByHandle(a.id, 'missing'), undefined);
      });
    });

    it('refuses a taken family handle within a site but allows it on another site', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cat-dup-a')),
        await tx.sites.insert(newSiteFixture('cat-dup-b')),
      ]);
      await storage().transaction((tx) => tx.catalog.insertFamily(familyFixture(a.id, 'plans')));
      await assert.rejects(
        storage().transaction((tx) => tx.catalog.insertFamily(familyFixture(a.id, 'plans', { name: 'Second' }))),
        isConflict,
      );
      const onB = await storage().transaction((tx) => tx.catalog.insertFamily(familyFixture(b.id, 'plans')));
      assert.equal(onB.siteId, b.id);
      await storage().transaction(async (tx) => {
        assert.deepEqual(
          (await tx.catalog.listFamilies(a.id)).map((f) => f.name),
          ['Family plans'],
          'the refused family left nothing behind',
        );
        assert.equal((await tx.catalog.findFamilyByHandle(b.id, 'plans'))?.id, onB.id);
      });
    });

    it('keeps families to their site', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cat-ten-a')),
        await tx.sites.insert(newSiteFixture('cat-ten-b')),
      ]);
      const family = await storage().transaction((tx) => tx.catalog.insertFamily(familyFixture(a.id, 'mine')));
      await storage().transaction(async (tx) => {
        assert.equal(await tx.catalog.findFamily(b.id, family.id), undefined);
        assert.equal(await tx.catalog.findFamilyByHandle(b.id, 'mine'), undefined);
        assert.deepEqual(await tx.catalog.listFamilies(b.id), []);
      });
    });

    it('inserts a product at version 1 with its exact terms, nulls and booleans included', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('cat-prod')));
      const family = await storage().transaction((tx) => tx.catalog.insertFamily(familyFixture(site.id, 'f')));
      const sparse = termsFixture();
      const created = await storage().transaction(async (tx) => [
        await tx.catalog.insertProduct(productFixture(family, 'basic'), sparse),
        await tx.catalog.insertProduct(productFixture(family, 'pro', { createdAt: at(T0, 7) }), FULL_TERMS),
      ]);
      const [basic, pro] = created;
      assert.ok(basic && pro);
      assert.equal(basic.product.currentVersion, 1);
      assert.equal(basic.product.archivedAt, null);
      assert.equal(basic.version.version, 1);
      assert.equal(basic.version.productId, basic.product.id);
      assert.equal(basic.version.siteId, site.id);
      assert.deepEqual(basic.version.terms, sparse);
      assert.deepEqual(pro.version.terms, FULL_TERMS);
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.catalog.findProduct(site.id, basic.product.id), basic.product);
        assert.deepEqual(await tx.catalog.findProductByHandle(site.id, 'pro'), pro.product);
        assert.equal((await tx.catalog.findProduct(site.id, pro.product.id))?.createdAt.getTime(), at(T0, 7).getTime());
        assert.deepEqual(await tx.catalog.findProductVersion(site.id, basic.product.id, 1), basic.version);
        const stored = await tx.catalog.findProductVersion(site.id, pro.product.id, 1);
        assert.deepEqual(stored?.terms, FULL_TERMS, 'zeros stay zeros, trues stay booleans');
        assert.equal(await tx.catalog.findProductVersion(site.id, basic.product.id, 2), undefined);
        assert.equal(await tx.catalog.findProduct(site.id, 987_654), undefined);
        assert.equal(await tx.catalog.findProductByHandle(site.id, 'missing'), undefined);
      });
    });

    it('refuses a taken product handle within a site but allows it on another site', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cat-pdup-a')),
        await tx.sites.insert(newSiteFixture('cat-pdup-b')),
      ]);
      const [famA, famB] = await storage().transaction(async (tx) => [
        await tx.catalog.insertFamily(familyFixture(a.id, 'f')),
        await tx.catalog.insertFamily(familyFixture(b.id, 'f')),
      ]);
      assert.ok(famA && famB);
      const first = await storage().transaction((tx) =>
        tx.catalog.insertProduct(productFixture(famA, 'gold'), termsFixture()),
      );
      await assert.rejects(
        storage().transaction((tx) =>
          tx.catalog.insertProduct(productFixture(famA, 'gold'), termsFixture({ name: 'Impostor' })),
        ),
        isConflict,
      );
      const onB = await storage().transaction((tx) =>
        tx.catalog.insertProduct(productFixture(famB, 'gold'), termsFixture()),
      );
      assert.equal(onB.product.siteId, b.id);
      await storage().transaction(async (tx) => {
        assert.deepEqual(
          (await tx.catalog.listProducts(a.id)).map((p) => p.id),
          [first.product.id],
        );
        const version = await tx.catalog.findProductVersion(a.id, first.product.id, 1);
        assert.equal(version?.terms.name, 'Basic', 'the refused insert did not touch the first product');
      });
    });

    it('adds a version only at the expected current version and keeps old versions readable', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('cat-ver')));
      const family = await storage().transaction((tx) => tx.catalog.insertFamily(familyFixture(site.id, 'f')));
      const v1 = termsFixture();
      const { product } = await storage().transaction((tx) =>
        tx.catalog.insertProduct(productFixture(family, 'p'), v1),
      );
      const edited = at(T0, 60_000 + 5);
      const added = await storage().transaction((tx) =>
        tx.catalog.addProductVersion(site.id, product.id, 1, FULL_TERMS, edited),
      );
      assert.equal(added?.product.currentVersion, 2);
      assert.equal(added?.product.updatedAt.getTime(), edited.getTime());
      assert.equal(added?.version.version, 2);
      assert.equal(added?.version.productId, product.id);
      assert.equal(added?.version.createdAt.getTime(), edited.getTime());
      assert.deepEqual(added?.version.terms, FULL_TERMS);

      const stale = await storage().transaction((tx) =>
        tx.catalog.addProductVersion(site.id, product.id, 1, termsFixture({ name: 'Stale' }), at(edited, 1)),
      );
      assert.equal(stale, undefined, 'a stale expected version loses');
      const missing = await storage().transaction((tx) =>
        tx.catalog.addProductVersion(site.id, 987_654, 1, termsFixture(), edited),
      );
      assert.equal(missing, undefined);

      await storage().transaction(async (tx) => {
        const stored = await tx.catalog.findProduct(site.id, product.id);
        assert.equal(stored?.currentVersion, 2, 'the stale edit changed nothing');
        assert.equal(stored?.updatedAt.getTime(), edited.getTime());
        assert.deepEqual((await tx.catalog.findProductVersion(site.id, product.id, 1))?.terms, v1);
        assert.deepEqual(await tx.catalog.findProductVersion(site.id, product.id, 2), added?.version);
        assert.equal(await tx.catalog.findProductVersion(site.id, product.id, 3), undefined);
      });

      const third = await storage().transaction((tx) =>
        tx.catalog.addProductVersion(site.id, product.id, 2, termsFixture({ priceInCents: 1 }), at(edited, 2)),
      );
      assert.equal(third?.product.currentVersion, 3, 'the current version moves on from the new one');
    });

    it('archives and unarchives a product', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('cat-arch')));
      const family = await storage().transaction((tx) => tx.catalog.insertFamily(familyFixture(site.id, 'f')));
      const { product } = await storage().transaction((tx) =>
        tx.catalog.insertProduct(productFixture(family, 'p'), termsFixture()),
      );
      const archivedAt = at(T0, 3_600_000 + 11);
      const archived = await storage().transaction((tx) =>
        tx.catalog.setProductArchived(site.id, product.id, archivedAt, at(archivedAt, 1)),
      );
      assert.equal(archived?.archivedAt?.getTime(), archivedAt.getTime());
      assert.equal(archived?.updatedAt.getTime(), at(archivedAt, 1).getTime());
      const reread = await storage().transaction((tx) => tx.catalog.findProduct(site.id, product.id));
      assert.deepEqual(reread, archived);
      assert.equal(reread?.currentVersion, 1, 'archiving does not add a version');
      const restored = await storage().transaction((tx) =>
        tx.catalog.setProductArchived(site.id, product.id, null, at(archivedAt, 2)),
      );
      assert.equal(restored?.archivedAt, null);
      assert.equal(
        (await storage().transaction((tx) => tx.catalog.findProduct(site.id, product.id)))?.archivedAt,
        null,
      );
      assert.equal(
        await storage().transaction((tx) => tx.catalog.setProductArchived(site.id, 987_654, archivedAt, archivedAt)),
        undefined,
      );
    });

    it("lists a site's products in id order, of one family when given", async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cat-list-a')),
        await tx.sites.insert(newSiteFixture('cat-list-b')),
      ]);
      const ids = await storage().transaction(async (tx) => {
        const f1 = await tx.catalog.insertFamily(familyFixture(a.id, 'one'));
        const f2 = await tx.catalog.insertFamily(familyFixture(a.id, 'two'));
        const fb = await tx.catalog.insertFamily(familyFixture(b.id, 'one'));
        // Interleaved across families and sites, and handles out of alphabetical order, so only id order fits.
        const p1 = await tx.catalog.insertProduct(productFixture(f2, 'zz'), termsFixture());
        const pb = await tx.catalog.insertProduct(productFixture(fb, 'bb'), termsFixture());
        const p2 = await tx.catalog.insertProduct(productFixture(f1, 'mm'), termsFixture());
        const p3 = await tx.catalog.insertProduct(productFixture(f2, 'aa'), termsFixture());
        return { f1: f1.id, f2: f2.id, p1: p1.product.id, pb: pb.product.id, p2: p2.product.id, p3: p3.product.id };
      });
      await storage().transaction(async (tx) => {
        assert.deepEqual(
          (await tx.catalog.listProducts(a.id)).map((p) => p.id),
          [ids.p1, ids.p2, ids.p3],
        );
        assert.deepEqual(
          (await tx.catalog.listProducts(a.id, ids.f2)).map((p) => p.id),
          [ids.p1, ids.p3],
        );
        assert.deepEqual(
          (await tx.catalog.listProducts(a.id, ids.f1)).map((p) => p.handle),
          ['mm'],
        );
        assert.deepEqual(
          (await tx.catalog.listProducts(b.id)).map((p) => p.id),
          [ids.pb],
        );
        assert.deepEqual(await tx.catalog.listProducts(b.id, ids.f2), [], "another site's family lists nothing");
      });
    });

    it('keeps products and their versions to their site', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cat-pten-a')),
        await tx.sites.insert(newSiteFixture('cat-pten-b')),
      ]);
      const family = await storage().transaction((tx) => tx.catalog.insertFamily(familyFixture(a.id, 'f')));
      const { product } = await storage().transaction((tx) =>
        tx.catalog.insertProduct(productFixture(family, 'mine'), termsFixture()),
      );
      await storage().transaction(async (tx) => {
        assert.equal(await tx.catalog.findProduct(b.id, product.id), undefined);
        assert.equal(await tx.catalog.findProductByHandle(b.id, 'mine'), undefined);
        assert.equal(await tx.catalog.findProductVersion(b.id, product.id, 1), undefined);
        assert.equal(
          await tx.catalog.addProductVersion(b.id, product.id, 1, termsFixture({ name: 'X' }), T0),
          undefined,
        );
        assert.equal(await tx.catalog.setProductArchived(b.id, product.id, T0, T0), undefined);
      });
      const stored = await storage().transaction((tx) => tx.catalog.findProduct(a.id, product.id));
      assert.deepEqual(stored, product, "another site's edits changed nothing");
      assert.equal(await storage().transaction((tx) => tx.catalog.findProductVersion(a.id, product.id, 2)), undefined);
    });

    it('within one transaction: a family or product read again after any write, by any repository, is current', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('cat-in-tx')));
      const family = await storage().transaction((tx) => tx.catalog.insertFamily(familyFixture(site.id, 'f')));
      const { product } = await storage().transaction((tx) =>
        tx.catalog.insertProduct(productFixture(family, 'p'), termsFixture()),
      );
      await storage().transaction(async (tx) => {
        const first = await tx.catalog.findFamily(site.id, family.id);
        assert.equal(first?.name, family.name);
        (first as { name: string }).name = 'mutated';
        assert.equal((await tx.catalog.findFamily(site.id, family.id))?.name, family.name);
        await tx.catalog.updateFamily(site.id, family.id, { name: 'Renamed' });
        assert.equal((await tx.catalog.findFamily(site.id, family.id))?.name, 'Renamed');

        assert.equal((await tx.catalog.findProduct(site.id, product.id))?.currentVersion, 1);
        await tx.catalog.addProductVersion(site.id, product.id, 1, termsFixture({ priceInCents: 900 }), at(T0, 1));
        assert.equal((await tx.catalog.findProduct(site.id, product.id))?.currentVersion, 2);
        // Another repository writes products too: a price point made the default moves the product.
        const [original] = await tx.pricePoints.listProductPricePoints(site.id, { productId: product.id });
        assert.ok(original);
        const cheap = await tx.pricePoints.insertProductPricePoint(
          {
            siteId: site.id,
            productId: product.id,
            name: 'Cheap',
            handle: 'cheap',
            archivedAt: null,
            createdAt: at(T0, 2),
            updatedAt: at(T0, 2),
          },
          termsFixture({ priceInCents: 100 }),
        );
        assert.equal((await tx.catalog.findProduct(site.id, product.id))?.currentVersion, 2);
        await tx.pricePoints.makeDefaultProductPricePoint(site.id, cheap.pricePoint.id, at(T0, 3));
        assert.equal((await tx.catalog.findProduct(site.id, product.id))?.currentVersion, cheap.pricePoint.version);
      });
    });

    it('hands out copies: mutating returned terms changes nothing stored', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('cat-copy')));
      const family = await storage().transaction((tx) => tx.catalog.insertFamily(familyFixture(site.id, 'f')));
      const { product, version } = await storage().transaction((tx) =>
        tx.catalog.insertProduct(productFixture(family, 'p'), termsFixture()),
      );
      (version.terms as { priceInCents: number }).priceInCents = 1;
      (product as { handle: string }).handle = 'mutated';
      const read = await storage().transaction((tx) => tx.catalog.findProductVersion(site.id, product.id, 1));
      assert.ok(read);
      (read.terms as { name: string }).name = 'mutated';
      await storage().transaction(async (tx) => {
        assert.deepEqual((await tx.catalog.findProductVersion(site.id, product.id, 1))?.terms, termsFixture());
        assert.equal((await tx.catalog.findProduct(site.id, product.id))?.handle, 'p');
      });
    });
  });
}
