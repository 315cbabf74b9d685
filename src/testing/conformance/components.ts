import assert from 'node:assert/strict';
import type { ComponentPricing, ComponentRecord, ProductFamilyRecord } from 'billing-engine';
import { familyFixture, isConflict, seedBillingSite } from './billing-fixtures.js';
import { at, newSiteFixture, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

/** Tiered brackets with an open-ended last one and prices a float codec would mangle. */
const TIERED: ComponentPricing = {
  scheme: 'tiered',
  brackets: [
    { startingQuantity: 1, endingQuantity: 10, unitPrice: '0.0125' },
    { startingQuantity: 11, endingQuantity: null, unitPrice: '1234567.8901' },
  ],
};

/** A new component of a family; nullable fields null, so a codec that drops nulls shows. */
function componentFixture(
  family: Pick<ProductFamilyRecord, 'siteId' | 'id'>,
  overrides: Partial<Omit<ComponentRecord, 'id' | 'currentVersion'>> = {},
): Omit<ComponentRecord, 'id' | 'currentVersion'> {
  return {
    siteId: family.siteId,
    familyId: family.id,
    kind: 'quantity_based_component',
    name: 'Seats',
    handle: null,
    unitName: 'seat',
    description: null,
    taxable: false,
    archivedAt: null,
    createdAt: T0,
    updatedAt: at(T0, 1),
    ...overrides,
  };
}

/** Cases for the components repository: versions, handles, partial updates, tenancy and rollback. */
export function componentCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('components', () => {
    it('inserts a component at version 1 with its exact pricing and finds it by id, handle and version', async () => {
      const seed = await seedBillingSite(storage(), 'cmp-ins');
      const [plain, full] = await storage().transaction(async (tx) => [
        await tx.components.insert(componentFixture(seed.family), TIERED),
        await tx.components.insert(
          componentFixture(seed.family, {
            kind: 'on_off_component',
            name: 'SSL',
            handle: 'ssl',
            description: 'Certificate',
            taxable: true,
            archivedAt: at(T0, 9),
          }),
          { scheme: 'per_unit', brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice: '9.99' }] },
        ),
      ]);
      assert.ok(plain && full);
      assert.ok(Number.isSafeInteger(plain.component.id) && plain.component.id > 0);
      assert.equal(plain.component.currentVersion, 1);
      const { id: _id, currentVersion: _v, ...fields } = plain.component;
      assert.deepEqual(fields, componentFixture(seed.family), 'fields are stored as given');
      assert.deepEqual(plain.version, {
        siteId: seed.site.id,
        componentId: plain.component.id,
        version: 1,
        pricing: TIERED,
        createdAt: T0,
      });
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.components.findById(seed.site.id, plain.component.id), plain.component);
        assert.deepEqual(await tx.components.findByHandle(seed.site.id, 'ssl'), full.component);
        const stored = await tx.components.findVersion(seed.site.id, plain.component.id, 1);
        assert.deepEqual(stored?.pricing, TIERED, 'prices stay exact strings and the open end stays null');
        assert.equal((await tx.components.findById(seed.site.id, full.component.id))?.taxable, true);
        assert.equal(
          (await tx.components.findById(seed.site.id, full.component.id))?.archivedAt?.getTime(),
          at(T0, 9).getTime(),
        );
        assert.equal(await tx.components.findVersion(seed.site.id, plain.component.id, 2), undefined);
        assert.equal(await tx.components.findById(seed.site.id, 987_654), undefined);
        assert.equal(await tx.components.findByHandle(seed.site.id, 'missing'), undefined);
      });
    });

    it('keeps handles unique per site when present; components without a handle never clash', async () => {
      const seed = await seedBillingSite(storage(), 'cmp-dup');
      const other = await storage().transaction(async (tx) => {
        const site = await tx.sites.insert(newSiteFixture('cmp-dup-b'));
        return tx.catalog.insertFamily(familyFixture(site.id, 'f'));
      });
      await storage().transaction(async (tx) => {
        await tx.components.insert(componentFixture(seed.family, { handle: 'seats' }), TIERED);
        await tx.components.insert(componentFixture(seed.family), TIERED);
        await tx.components.insert(componentFixture(seed.family), TIERED);
      });
      await assert.rejects(
        storage().transaction((tx) =>
          tx.components.insert(componentFixture(seed.family, { handle: 'seats', name: 'Twin' }), TIERED),
        ),
        isConflict,
      );
      const onOther = await storage().transaction((tx) =>
        tx.components.insert(componentFixture(other, { handle: 'seats' }), TIERED),
      );
      assert.equal(onOther.component.siteId, other.siteId);
      const list = await storage().transaction((tx) => tx.components.list(seed.site.id));
      assert.deepEqual(
        list.map((c) => [c.name, c.handle]),
        [
          ['Seats', 'seats'],
          ['Seats', null],
          ['Seats', null],
        ],
        'the refused insert left nothing behind',
      );
    });

    it('adds a pricing version only at the expected current version and keeps old versions', async () => {
      const seed = await seedBillingSite(storage(), 'cmp-ver');
      const { component } = await storage().transaction((tx) =>
        tx.components.insert(componentFixture(seed.family), TIERED),
      );
      const volume: ComponentPricing = { ...TIERED, scheme: 'volume' };
      const edited = at(T0, 60_000 + 3);
      const added = await storage().transaction((tx) =>
        tx.components.addVersion(seed.site.id, component.id, 1, volume, edited),
      );
      assert.equal(added?.component.currentVersion, 2);
      assert.equal(added?.component.updatedAt.getTime(), edited.getTime());
      assert.deepEqual(added?.version, {
        siteId: seed.site.id,
        componentId: component.id,
        version: 2,
        pricing: volume,
        createdAt: edited,
      });
      const stale = await storage().transaction((tx) =>
        tx.components.addVersion(seed.site.id, component.id, 1, TIERED, at(edited, 1)),
      );
      assert.equal(stale, undefined, 'a stale expected version loses');
      assert.equal(
        await storage().transaction((tx) => tx.components.addVersion(seed.site.id, 987_654, 1, TIERED, edited)),
        undefined,
      );
      await storage().transaction(async (tx) => {
        assert.equal((await tx.components.findById(seed.site.id, component.id))?.currentVersion, 2);
        assert.deepEqual((await tx.components.findVersion(seed.site.id, component.id, 1))?.pricing, TIERED);
        assert.deepEqual((await tx.components.findVersion(seed.site.id, component.id, 2))?.pricing, volume);
        assert.equal(await tx.components.findVersion(seed.site.id, component.id, 3), undefined);
      });
    });

    it('updates only the given non-pricing fields, refusing a taken handle', async () => {
      const seed = await seedBillingSite(storage(), 'cmp-upd');
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.components.insert(componentFixture(seed.family, { handle: 'a' }), TIERED),
        await tx.components.insert(componentFixture(seed.family, { handle: 'b', description: 'keep me' }), TIERED),
      ]);
      assert.ok(a && b);
      const later = at(T0, 5000);
      const updated = await storage().transaction((tx) =>
        tx.components.update(seed.site.id, b.component.id, {
          name: 'Users',
          unitName: 'user',
          handle: null,
          archivedAt: later,
          updatedAt: later,
        }),
      );
      assert.deepEqual(updated, {
        ...b.component,
        name: 'Users',
        unitName: 'user',
        handle: null,
        archivedAt: later,
        updatedAt: later,
      });
      assert.equal(updated?.description, 'keep me');
      assert.equal(updated?.currentVersion, 1, 'a field update adds no version');
      await assert.rejects(
        storage().transaction((tx) =>
          tx.components.update(seed.site.id, b.component.id, { handle: 'a', name: 'Clash' }),
        ),
        isConflict,
      );
      assert.equal(
        await storage().transaction((tx) => tx.components.update(seed.site.id, 987_654, { name: 'x' })),
        undefined,
      );
      const stored = await storage().transaction((tx) => tx.components.findById(seed.site.id, b.component.id));
      assert.equal(stored?.name, 'Users', 'the refused update changed nothing');
      assert.equal(stored?.handle, null);
      assert.equal(stored?.archivedAt?.getTime(), later.getTime());
    });

    it('lists components by site and family in id order, and keeps them to their site', async () => {
      const seed = await seedBillingSite(storage(), 'cmp-list');
      const other = await seedBillingSite(storage(), 'cmp-list-b');
      const second = await storage().transaction((tx) =>
        tx.catalog.insertFamily(familyFixture(seed.site.id, 'second')),
      );
      const ids = await storage().transaction(async (tx) => [
        (await tx.components.insert(componentFixture(second, { name: 'Z' }), TIERED)).component.id,
        (await tx.components.insert(componentFixture(seed.family, { name: 'A' }), TIERED)).component.id,
        (await tx.components.insert(componentFixture(other.family, { name: 'Other', handle: 'h' }), TIERED)).component
          .id,
      ]);
      await storage().transaction(async (tx) => {
        assert.deepEqual(
          (await tx.components.list(seed.site.id)).map((c) => c.name),
          ['Z', 'A'],
        );
        assert.deepEqual(
          (await tx.components.list(seed.site.id, seed.family.id)).map((c) => c.name),
          ['A'],
        );
        assert.deepEqual(
          (await tx.components.list(seed.site.id, second.id)).map((c) => c.name),
          ['Z'],
        );
        assert.equal(await tx.components.findById(seed.site.id, ids[2]!), undefined);
        assert.equal(await tx.components.findByHandle(seed.site.id, 'h'), undefined);
        assert.equal(await tx.components.findVersion(seed.site.id, ids[2]!, 1), undefined);
        assert.equal(await tx.components.addVersion(seed.site.id, ids[2]!, 1, TIERED, T0), undefined);
        assert.equal(await tx.components.update(seed.site.id, ids[2]!, { name: 'Stolen' }), undefined);
      });
    });

    it('hands out copies and leaves no trace of a rolled-back transaction', async () => {
      const seed = await seedBillingSite(storage(), 'cmp-copy');
      // A private copy goes in, so an adapter that handed back the caller's object cannot corrupt TIERED.
      const { component, version } = await storage().transaction((tx) =>
        tx.components.insert(componentFixture(seed.family), structuredClone(TIERED)),
      );
      (version.pricing.brackets[0] as { unitPrice: string }).unitPrice = '999';
      (component as { name: string }).name = 'mutated';
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.components.insert(componentFixture(seed.family, { handle: 'ghost' }), TIERED);
          await tx.components.addVersion(seed.site.id, component.id, 1, { ...TIERED, scheme: 'stairstep' }, T0);
          throw new Abort('roll back');
        }),
        Abort,
      );
      await storage().transaction(async (tx) => {
        assert.equal(
          (await tx.components.findVersion(seed.site.id, component.id, 1))?.pricing.brackets[0]?.unitPrice,
          '0.0125',
        );
        assert.equal((await tx.components.findById(seed.site.id, component.id))?.name, 'Seats');
        assert.equal((await tx.components.findById(seed.site.id, component.id))?.currentVersion, 1);
        assert.equal(await tx.components.findByHandle(seed.site.id, 'ghost'), undefined);
        assert.equal(await tx.components.findVersion(seed.site.id, component.id, 2), undefined);
      });
    });
  });
}
