import assert from 'node:assert/strict';
import type { ReasonCodeRecord } from 'billing-engine';
import { seedBillingSite } from './billing-fixtures.js';
import { couponFixture } from './coupons.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

function reasonCodeFixture(siteId: number, code: string, position = 1): Omit<ReasonCodeRecord, 'id'> {
  return { siteId, code, description: `Because ${code}`, position, createdAt: at(T0, 1), updatedAt: at(T0, 2) };
}

/** Cases for the reason-codes and coupon-subcodes repositories. */
export function siteExtraCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('reason codes', () => {
    it('round-trips codes exactly, lists by position then id, and keeps codes unique in any letter case', async () => {
      const seed = await seedBillingSite(storage(), 'rc-basic');
      const other = await seedBillingSite(storage(), 'rc-other');
      const [b, a, c] = await storage().transaction(async (tx) => [
        await tx.reasonCodes.insert(reasonCodeFixture(seed.site.id, 'B', 2)),
        await tx.reasonCodes.insert(reasonCodeFixture(seed.site.id, 'Ünï', 1)),
        await tx.reasonCodes.insert(reasonCodeFixture(seed.site.id, 'C', 2)),
      ]);
      assert.ok(a && b && c);
      const { id: _id, ...fields } = b;
      assert.deepEqual(fields, reasonCodeFixture(seed.site.id, 'B', 2));
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.reasonCodes.list(seed.site.id, { page: 1, perPage: 10 }), [a, b, c]);
        assert.deepEqual(await tx.reasonCodes.list(seed.site.id, { page: 2, perPage: 2 }), [c]);
        assert.deepEqual(await tx.reasonCodes.findByCode(seed.site.id, 'b'), b);
        assert.deepEqual(await tx.reasonCodes.findById(seed.site.id, a.id), a);
        assert.equal(await tx.reasonCodes.findById(other.site.id, a.id), undefined, 'another site cannot read it');
        assert.equal(await tx.reasonCodes.findByCode(other.site.id, 'B'), undefined);
      });
      await assert.rejects(
        storage().transaction((tx) => tx.reasonCodes.insert(reasonCodeFixture(seed.site.id, 'b'))),
        (error: { code?: string }) => error.code === 'conflict',
      );
      await assert.rejects(
        storage().transaction((tx) => tx.reasonCodes.update(seed.site.id, c.id, { code: 'b' })),
        (error: { code?: string }) => error.code === 'conflict',
      );
      // Another site may have the same code; a renamed code frees the old one.
      await storage().transaction((tx) => tx.reasonCodes.insert(reasonCodeFixture(other.site.id, 'B')));
      const renamed = await storage().transaction((tx) =>
        tx.reasonCodes.update(seed.site.id, b.id, { code: 'B2', position: 7, updatedAt: at(T0, 9) }),
      );
      assert.deepEqual(renamed, { ...b, code: 'B2', position: 7, updatedAt: at(T0, 9) });
      assert.equal(
        await storage().transaction((tx) => tx.reasonCodes.update(other.site.id, b.id, { code: 'X' })),
        undefined,
      );
      assert.equal(await storage().transaction((tx) => tx.reasonCodes.delete(other.site.id, b.id)), false);
      assert.equal(await storage().transaction((tx) => tx.reasonCodes.delete(seed.site.id, b.id)), true);
      assert.equal(await storage().transaction((tx) => tx.reasonCodes.delete(seed.site.id, b.id)), false);
    });
  });

  describe('coupon subcodes', () => {
    it('inserts once per site, lists by id, deletes, and lets the coupon lookup by code find the parent', async () => {
      const seed = await seedBillingSite(storage(), 'sub-basic');
      const other = await seedBillingSite(storage(), 'sub-other');
      const [coupon, second] = await storage().transaction(async (tx) => [
        await tx.coupons.insert(couponFixture(seed.family, 'MAIN')),
        await tx.coupons.insert(couponFixture(seed.family, 'SECOND')),
      ]);
      assert.ok(coupon && second);
      const s1 = await storage().transaction((tx) =>
        tx.couponSubcodes.insert({ siteId: seed.site.id, couponId: coupon.id, code: 'S1', createdAt: at(T0, 3) }),
      );
      assert.ok(s1);
      assert.deepEqual(
        { ...s1, id: 0 },
        { id: 0, siteId: seed.site.id, couponId: coupon.id, code: 'S1', createdAt: at(T0, 3) },
      );
      const dup = await storage().transaction((tx) =>
        tx.couponSubcodes.insert({ siteId: seed.site.id, couponId: second.id, code: 'S1', createdAt: T0 }),
      );
      assert.equal(dup, undefined, 'a subcode is unique per site across coupons');
      const s2 = await storage().transaction((tx) =>
        tx.couponSubcodes.insert({ siteId: seed.site.id, couponId: coupon.id, code: 'S2', createdAt: T0 }),
      );
      assert.ok(s2);
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.couponSubcodes.list(seed.site.id, coupon.id, { page: 1, perPage: 10 }), [s1, s2]);
        assert.deepEqual(await tx.couponSubcodes.list(seed.site.id, coupon.id, { page: 2, perPage: 1 }), [s2]);
        assert.deepEqual(await tx.couponSubcodes.list(seed.site.id, second.id, { page: 1, perPage: 10 }), []);
        assert.deepEqual(await tx.couponSubcodes.findByCode(seed.site.id, 'S2'), s2);
        assert.deepEqual(await tx.coupons.findByCode(seed.site.id, 'S1'), coupon, 'a subcode finds its coupon');
        assert.deepEqual(await tx.coupons.findByCode(seed.site.id, 'MAIN'), coupon);
        assert.equal(await tx.coupons.findByCode(other.site.id, 'S1'), undefined, 'not from another site');
      });
      // A rolled-back insert leaves nothing.
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.couponSubcodes.insert({ siteId: seed.site.id, couponId: coupon.id, code: 'GONE', createdAt: T0 });
          throw new Abort();
        }),
        Abort,
      );
      assert.equal(await storage().transaction((tx) => tx.couponSubcodes.findByCode(seed.site.id, 'GONE')), undefined);
      assert.equal(await storage().transaction((tx) => tx.couponSubcodes.delete(seed.site.id, second.id, 'S1')), false);
      assert.equal(await storage().transaction((tx) => tx.couponSubcodes.delete(seed.site.id, coupon.id, 'S1')), true);
      assert.equal(await storage().transaction((tx) => tx.coupons.findByCode(seed.site.id, 'S1')), undefined);
      assert.equal(await storage().transaction((tx) => tx.couponSubcodes.deleteAll(seed.site.id, coupon.id)), 1);
      assert.deepEqual(
        await storage().transaction((tx) => tx.couponSubcodes.list(seed.site.id, coupon.id, { page: 1, perPage: 10 })),
        [],
      );
    });
  });
}
