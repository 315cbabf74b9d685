import assert from 'node:assert/strict';
import type { CouponRecord, ProductFamilyRecord } from 'billing-engine';
import { isConflict, seedBillingSite } from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

/** A new coupon of a family: a percentage coupon with the nullable fields null. */
export function couponFixture(
  family: Pick<ProductFamilyRecord, 'siteId' | 'id'>,
  code: string,
  overrides: Partial<Omit<CouponRecord, 'id' | 'redemptions'>> = {},
): Omit<CouponRecord, 'id' | 'redemptions'> {
  return {
    siteId: family.siteId,
    familyId: family.id,
    name: `Coupon ${code}`,
    code,
    description: null,
    percentage: '12.5',
    amountInCents: null,
    recurring: false,
    durationPeriodCount: null,
    endDate: null,
    allowNegativeBalance: false,
    stackable: false,
    compoundingStrategy: 'compound',
    conversionLimit: null,
    archivedAt: null,
    createdAt: T0,
    updatedAt: at(T0, 1),
    ...overrides,
  };
}

/** Cases for the coupons repository, above all the race-safe `redeem` under a conversion limit. */
export function couponCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('coupons', () => {
    it('inserts coupons with 0 redemptions and exact fields, and finds them by id and code', async () => {
      const seed = await seedBillingSite(storage(), 'cpn-ins');
      const flatFields = couponFixture(seed.family, 'FLAT10', {
        description: 'Ten off',
        percentage: null,
        amountInCents: 1000,
        recurring: true,
        durationPeriodCount: 3,
        endDate: at(T0, 86_400_000 - 124),
        allowNegativeBalance: true,
        stackable: true,
        compoundingStrategy: 'full-price',
        conversionLimit: 0,
      });
      const [percent, flat] = await storage().transaction(async (tx) => [
        await tx.coupons.insert(couponFixture(seed.family, 'SAVE12')),
        await tx.coupons.insert(flatFields),
      ]);
      assert.ok(percent && flat);
      assert.ok(Number.isSafeInteger(percent.id) && percent.id > 0);
      assert.equal(percent.redemptions, 0);
      const { id: _id, redemptions: _r, ...fields } = flat;
      assert.deepEqual(fields, flatFields, 'fields are stored as given: zeros, trues and nulls included');
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.coupons.findById(seed.site.id, percent.id), percent);
        assert.deepEqual(await tx.coupons.findByCode(seed.site.id, 'FLAT10'), flat);
        const stored = await tx.coupons.findById(seed.site.id, flat.id);
        assert.equal(
          stored?.endDate?.getTime(),
          at(T0, 86_400_000 - 124).getTime(),
          'instants keep millisecond precision',
        );
        assert.equal(stored?.conversionLimit, 0, 'a zero limit stays zero, not null');
        assert.equal(
          (await tx.coupons.findById(seed.site.id, percent.id))?.percentage,
          '12.5',
          'percentages stay exact strings',
        );
        assert.equal(await tx.coupons.findById(seed.site.id, 987_654), undefined);
        assert.equal(await tx.coupons.findByCode(seed.site.id, 'NOPE'), undefined);
      });
    });

    it('gives a redemption back, never below zero, and only for its own site', async () => {
      const seed = await seedBillingSite(storage(), 'cpn-release');
      const coupon = await storage().transaction((tx) =>
        tx.coupons.insert(couponFixture(seed.family, 'BACK', { conversionLimit: 1 })),
      );
      assert.equal(
        (await storage().transaction((tx) => tx.coupons.redeem(seed.site.id, coupon.id, T0)))?.redemptions,
        1,
      );
      assert.equal(
        await storage().transaction((tx) => tx.coupons.redeem(seed.site.id, coupon.id, T0)),
        undefined,
        'limit reached',
      );
      assert.equal(
        await storage().transaction((tx) => tx.coupons.releaseRedemption(seed.site.id + 1000, coupon.id, T0)),
        undefined,
      );
      assert.equal(
        (await storage().transaction((tx) => tx.coupons.releaseRedemption(seed.site.id, coupon.id, T0)))?.redemptions,
        0,
      );
      assert.equal(
        (await storage().transaction((tx) => tx.coupons.releaseRedemption(seed.site.id, coupon.id, T0)))?.redemptions,
        0,
      );
      assert.equal(
        (await storage().transaction((tx) => tx.coupons.redeem(seed.site.id, coupon.id, T0)))?.redemptions,
        1,
        'usable again',
      );
    });

    it('keeps codes unique per site, on insert and on update', async () => {
      const seed = await seedBillingSite(storage(), 'cpn-dup');
      const other = await seedBillingSite(storage(), 'cpn-dup-b');
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.coupons.insert(couponFixture(seed.family, 'A')),
        await tx.coupons.insert(couponFixture(seed.family, 'B')),
      ]);
      assert.ok(a && b);
      await assert.rejects(
        storage().transaction((tx) => tx.coupons.insert(couponFixture(seed.family, 'A', { name: 'Twin' }))),
        isConflict,
      );
      await assert.rejects(
        storage().transaction((tx) => tx.coupons.update(seed.site.id, b.id, { code: 'A', name: 'Clash' })),
        isConflict,
      );
      const onOther = await storage().transaction((tx) => tx.coupons.insert(couponFixture(other.family, 'A')));
      assert.equal(onOther.siteId, other.site.id);
      await storage().transaction(async (tx) => {
        assert.deepEqual(
          (await tx.coupons.list(seed.site.id, { page: 1, perPage: 10 })).map((c) => [c.code, c.name]),
          [
            ['A', 'Coupon A'],
            ['B', 'Coupon B'],
          ],
          'the refused insert and update left nothing behind',
        );
        assert.equal((await tx.coupons.findByCode(seed.site.id, 'A'))?.id, a.id);
      });
    });

    it("lists a site's coupons by id, one page at a time", async () => {
      const seed = await seedBillingSite(storage(), 'cpn-list');
      const other = await seedBillingSite(storage(), 'cpn-list-b');
      await storage().transaction(async (tx) => {
        for (const code of ['E', 'D', 'C', 'B', 'A']) await tx.coupons.insert(couponFixture(seed.family, code));
        await tx.coupons.insert(couponFixture(other.family, 'X'));
      });
      await storage().transaction(async (tx) => {
        const page = async (n: number, size: number) =>
          (await tx.coupons.list(seed.site.id, { page: n, perPage: size })).map((c) => c.code);
        assert.deepEqual(await page(1, 2), ['E', 'D']);
        assert.deepEqual(await page(2, 2), ['C', 'B']);
        assert.deepEqual(await page(3, 2), ['A']);
        assert.deepEqual(await page(4, 2), []);
        assert.deepEqual(await page(1, 200), ['E', 'D', 'C', 'B', 'A'], "only the site's own");
      });
    });

    it('updates only the given fields and reports a missing coupon as undefined', async () => {
      const seed = await seedBillingSite(storage(), 'cpn-upd');
      const coupon = await storage().transaction((tx) =>
        tx.coupons.insert(couponFixture(seed.family, 'UPD', { description: 'keep' })),
      );
      const later = at(T0, 7000);
      const updated = await storage().transaction((tx) =>
        tx.coupons.update(seed.site.id, coupon.id, {
          percentage: null,
          amountInCents: 250,
          archivedAt: later,
          endDate: later,
          updatedAt: later,
        }),
      );
      assert.deepEqual(updated, {
        ...coupon,
        percentage: null,
        amountInCents: 250,
        archivedAt: later,
        endDate: later,
        updatedAt: later,
      });
      assert.equal(
        await storage().transaction((tx) => tx.coupons.update(seed.site.id, 987_654, { name: 'x' })),
        undefined,
      );
      const stored = await storage().transaction((tx) => tx.coupons.findById(seed.site.id, coupon.id));
      assert.equal(stored?.description, 'keep');
      assert.equal(stored?.percentage, null);
      assert.equal(stored?.amountInCents, 250);
      assert.equal(stored?.redemptions, 0, 'an update never touches redemptions');
    });

    it('redeems while under the limit, without a limit forever, and never for another site', async () => {
      const seed = await seedBillingSite(storage(), 'cpn-red');
      const other = await seedBillingSite(storage(), 'cpn-red-b');
      const [limited, unlimited] = await storage().transaction(async (tx) => [
        await tx.coupons.insert(couponFixture(seed.family, 'TWO', { conversionLimit: 2 })),
        await tx.coupons.insert(couponFixture(seed.family, 'ANY')),
      ]);
      assert.ok(limited && unlimited);
      const redeem = (siteId: number, id: number, ms: number) =>
        storage().transaction((tx) => tx.coupons.redeem(siteId, id, at(T0, ms)));
      const first = await redeem(seed.site.id, limited.id, 10);
      assert.equal(first?.redemptions, 1);
      assert.equal(first?.updatedAt.getTime(), at(T0, 10).getTime());
      assert.equal((await redeem(seed.site.id, limited.id, 20))?.redemptions, 2);
      assert.equal(await redeem(seed.site.id, limited.id, 30), undefined, 'the limit is reached');
      for (let i = 1; i <= 5; i++) assert.equal((await redeem(seed.site.id, unlimited.id, i))?.redemptions, i);
      assert.equal(await redeem(other.site.id, unlimited.id, 40), undefined, "another site's coupon is missing");
      assert.equal(await redeem(seed.site.id, 987_654, 40), undefined);
      await storage().transaction(async (tx) => {
        const stored = await tx.coupons.findById(seed.site.id, limited.id);
        assert.equal(stored?.redemptions, 2);
        assert.equal(stored?.updatedAt.getTime(), at(T0, 20).getTime(), 'a refused redemption changed nothing');
        assert.equal((await tx.coupons.findById(seed.site.id, unlimited.id))?.redemptions, 5);
      });
    });

    it('lets exactly 3 of 10 concurrent redemptions through a conversion limit of 3', async () => {
      const seed = await seedBillingSite(storage(), 'cpn-race');
      const coupon = await storage().transaction((tx) =>
        tx.coupons.insert(couponFixture(seed.family, 'RACE', { conversionLimit: 3 })),
      );
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          storage().transaction((tx) => tx.coupons.redeem(seed.site.id, coupon.id, at(T0, i))),
        ),
      );
      const won = results.filter((r) => r !== undefined);
      assert.equal(won.length, 3);
      assert.deepEqual(
        won.map((r) => r.redemptions).sort((a, b) => a - b),
        [1, 2, 3],
        'each winner saw its own count: no lost update',
      );
      const stored = await storage().transaction((tx) => tx.coupons.findById(seed.site.id, coupon.id));
      assert.equal(stored?.redemptions, 3);
    });

    it('undoes a redemption and an insert when their transaction rolls back', async () => {
      const seed = await seedBillingSite(storage(), 'cpn-rb');
      const coupon = await storage().transaction((tx) =>
        tx.coupons.insert(couponFixture(seed.family, 'ONE', { conversionLimit: 1 })),
      );
      await assert.rejects(
        storage().transaction(async (tx) => {
          assert.equal((await tx.coupons.redeem(seed.site.id, coupon.id, T0))?.redemptions, 1);
          await tx.coupons.insert(couponFixture(seed.family, 'GHOST'));
          throw new Abort('signup failed later');
        }),
        Abort,
      );
      await storage().transaction(async (tx) => {
        assert.equal((await tx.coupons.findById(seed.site.id, coupon.id))?.redemptions, 0);
        assert.equal(await tx.coupons.findByCode(seed.site.id, 'GHOST'), undefined);
      });
      assert.equal(
        (await storage().transaction((tx) => tx.coupons.redeem(seed.site.id, coupon.id, T0)))?.redemptions,
        1,
        'the use is still available',
      );
    });
  });
}
