import assert from 'node:assert/strict';
import type { MetafieldRecord, MetafieldResource, Storage } from 'billing-engine';
import {
  type BillingSeed,
  customerFixture,
  isConflict,
  seedBillingSite,
  subscriptionFixture,
} from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

/** A new field definition: a text field with every scope flag off and no allowed values. */
function fieldFixture(
  siteId: number,
  name: string,
  overrides: Partial<Omit<MetafieldRecord, 'id'>> = {},
): Omit<MetafieldRecord, 'id'> {
  return {
    siteId,
    resourceType: 'customer',
    name,
    inputType: 'text',
    enumValues: null,
    scope: { hosted: [], csv: false, invoices: false, statements: false, portal: false },
    createdAt: T0,
    updatedAt: at(T0, 1),
    ...overrides,
  };
}

/** Sets one value through the port, as a service would. */
function setValue(
  storage: Storage,
  field: MetafieldRecord,
  resourceId: number,
  value: string,
  ms: number,
  resourceType: MetafieldResource = field.resourceType,
) {
  return storage.transaction((tx) =>
    tx.metafields.setValue({
      siteId: field.siteId,
      resourceType,
      resourceId,
      metafieldId: field.id,
      name: field.name,
      value,
      updatedAt: at(T0, ms),
      now: at(T0, ms),
    }),
  );
}

async function secondCustomer(storage: Storage, seed: BillingSeed) {
  return storage.transaction((tx) =>
    tx.customers.insert(customerFixture(seed.site.id, { email: 'second@example.com' })),
  );
}

/** Cases for the metafields repository: definitions, values that follow renames and deletes, filters and tenancy. */
export function metafieldCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('metafields', () => {
    it('inserts definitions with exact scope and allowed values, and finds them per resource type', async () => {
      const seed = await seedBillingSite(storage(), 'mf-ins');
      const colorFields = fieldFixture(seed.site.id, 'Color', {
        inputType: 'dropdown',
        enumValues: ['red', 'blue', ''],
        scope: { hosted: ['all'], csv: true, invoices: false, statements: true, portal: false },
      });
      const [notes, color, onSub] = await storage().transaction(async (tx) => [
        await tx.metafields.insertField(fieldFixture(seed.site.id, 'Notes')),
        await tx.metafields.insertField(colorFields),
        await tx.metafields.insertField(
          fieldFixture(seed.site.id, 'Color', { resourceType: 'subscription', enumValues: [] }),
        ),
      ]);
      assert.ok(notes && color && onSub);
      assert.ok(Number.isSafeInteger(color.id) && color.id > 0);
      const { id: _id, ...fields } = color;
      assert.deepEqual(fields, colorFields, 'fields are stored as given');
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.metafields.findField(seed.site.id, 'customer', 'Color'), color);
        assert.deepEqual(await tx.metafields.findField(seed.site.id, 'subscription', 'Color'), onSub);
        assert.deepEqual(
          (await tx.metafields.findField(seed.site.id, 'subscription', 'Color'))?.enumValues,
          [],
          'an empty list stays a list',
        );
        assert.equal((await tx.metafields.findField(seed.site.id, 'customer', 'Notes'))?.enumValues, null);
        assert.deepEqual(await tx.metafields.listFields(seed.site.id, 'customer'), [notes, color]);
        assert.deepEqual(await tx.metafields.listFields(seed.site.id, 'subscription'), [onSub]);
        assert.equal(
          await tx.metafields.findField(seed.site.id, 'customer', 'color'),
          undefined,
          'names match exactly',
        );
      });
    });

    it('keeps names unique per site and resource type', async () => {
      const seed = await seedBillingSite(storage(), 'mf-dup');
      const other = await seedBillingSite(storage(), 'mf-dup-b');
      await storage().transaction((tx) => tx.metafields.insertField(fieldFixture(seed.site.id, 'Color')));
      await assert.rejects(
        storage().transaction((tx) =>
          tx.metafields.insertField(fieldFixture(seed.site.id, 'Color', { inputType: 'radio', enumValues: ['x'] })),
        ),
        isConflict,
      );
      await storage().transaction(async (tx) => {
        await tx.metafields.insertField(fieldFixture(other.site.id, 'Color'));
        await tx.metafields.insertField(fieldFixture(seed.site.id, 'Color', { resourceType: 'subscription' }));
      });
      const stored = await storage().transaction((tx) => tx.metafields.listFields(seed.site.id, 'customer'));
      assert.deepEqual(
        stored.map((f) => [f.name, f.inputType]),
        [['Color', 'text']],
        'the refused insert left nothing behind',
      );
    });

    it('sets values (insert, then replace in place), lists them by name, and deletes them', async () => {
      const seed = await seedBillingSite(storage(), 'mf-val');
      const [size, color] = await storage().transaction(async (tx) => [
        await tx.metafields.insertField(fieldFixture(seed.site.id, 'Size')),
        await tx.metafields.insertField(fieldFixture(seed.site.id, 'Color')),
      ]);
      assert.ok(size && color);
      const first = await setValue(storage(), size, seed.customer.id, 'L', 10);
      assert.deepEqual(
        { ...first, id: 0 },
        {
          id: 0,
          siteId: seed.site.id,
          resourceType: 'customer',
          resourceId: seed.customer.id,
          metafieldId: size.id,
          name: 'Size',
          value: 'L',
          createdAt: at(T0, 10),
          updatedAt: at(T0, 10),
        },
      );
      await setValue(storage(), color, seed.customer.id, '', 11);
      const replaced = await setValue(storage(), size, seed.customer.id, 'XL', 20);
      assert.equal(replaced.id, first.id, 'a second value of one field replaces the first');
      assert.equal(replaced.value, 'XL');
      assert.equal(replaced.createdAt.getTime(), at(T0, 10).getTime());
      assert.equal(replaced.updatedAt.getTime(), at(T0, 20).getTime());
      await storage().transaction(async (tx) => {
        const values = await tx.metafields.listValues(seed.site.id, 'customer', seed.customer.id);
        assert.deepEqual(
          values.map((v) => [v.name, v.value]),
          [
            ['Color', ''],
            ['Size', 'XL'],
          ],
          'by field name; an empty string stays an empty string',
        );
        assert.deepEqual(
          await tx.metafields.listValues(seed.site.id, 'subscription', seed.customer.id),
          [],
          'values belong to one resource type',
        );
        assert.equal(await tx.metafields.deleteValue(seed.site.id, 'customer', seed.customer.id, 'Size'), true);
        assert.equal(await tx.metafields.deleteValue(seed.site.id, 'customer', seed.customer.id, 'Size'), false);
        assert.deepEqual(
          (await tx.metafields.listValues(seed.site.id, 'customer', seed.customer.id)).map((v) => v.name),
          ['Color'],
        );
      });
    });

    it('finds the resources whose field has exactly a value', async () => {
      const seed = await seedBillingSite(storage(), 'mf-find');
      const second = await secondCustomer(storage(), seed);
      const third = await storage().transaction((tx) =>
        tx.customers.insert(customerFixture(seed.site.id, { email: 'third@example.com' })),
      );
      const sub = await storage().transaction((tx) =>
        tx.subscriptions.insert(subscriptionFixture(seed.customer, seed.product)),
      );
      const [plan, subPlan] = await storage().transaction(async (tx) => [
        await tx.metafields.insertField(fieldFixture(seed.site.id, 'Plan')),
        await tx.metafields.insertField(fieldFixture(seed.site.id, 'Plan', { resourceType: 'subscription' })),
      ]);
      assert.ok(plan && subPlan);
      await setValue(storage(), plan, third.id, 'gold', 1);
      await setValue(storage(), plan, seed.customer.id, 'gold', 2);
      await setValue(storage(), plan, second.id, 'Gold', 3);
      await setValue(storage(), subPlan, sub.id, 'gold', 4);
      await storage().transaction(async (tx) => {
        const found = await tx.metafields.resourcesWithValue(seed.site.id, 'customer', 'Plan', 'gold');
        assert.deepEqual(
          [...found].sort((a, b) => a - b),
          [seed.customer.id, third.id].sort((a, b) => a - b),
          'exact, case-sensitive match',
        );
        assert.deepEqual(await tx.metafields.resourcesWithValue(seed.site.id, 'subscription', 'Plan', 'gold'), [
          sub.id,
        ]);
        assert.deepEqual(await tx.metafields.resourcesWithValue(seed.site.id, 'customer', 'Plan', 'silver'), []);
      });
    });

    it('renames a field together with its values, refusing a taken name', async () => {
      const seed = await seedBillingSite(storage(), 'mf-ren');
      const [color, other] = await storage().transaction(async (tx) => [
        await tx.metafields.insertField(fieldFixture(seed.site.id, 'Color')),
        await tx.metafields.insertField(fieldFixture(seed.site.id, 'Other')),
      ]);
      assert.ok(color && other);
      await setValue(storage(), color, seed.customer.id, 'red', 1);
      const later = at(T0, 9000);
      const renamed = await storage().transaction((tx) =>
        tx.metafields.updateField(seed.site.id, color.id, {
          name: 'Colour',
          inputType: 'radio',
          enumValues: ['red'],
          scope: { hosted: ['7'], csv: true, invoices: true, statements: false, portal: true },
          updatedAt: later,
        }),
      );
      assert.deepEqual(renamed, {
        ...color,
        name: 'Colour',
        inputType: 'radio',
        enumValues: ['red'],
        scope: { hosted: ['7'], csv: true, invoices: true, statements: false, portal: true },
        updatedAt: later,
      });
      await assert.rejects(
        storage().transaction((tx) => tx.metafields.updateField(seed.site.id, color.id, { name: 'Other' })),
        isConflict,
      );
      assert.equal(
        await storage().transaction((tx) => tx.metafields.updateField(seed.site.id, 987_654, { name: 'x' })),
        undefined,
      );
      await storage().transaction(async (tx) => {
        assert.deepEqual(
          (await tx.metafields.listValues(seed.site.id, 'customer', seed.customer.id)).map((v) => [
            v.name,
            v.value,
            v.metafieldId,
          ]),
          [['Colour', 'red', color.id]],
        );
        assert.equal(await tx.metafields.findField(seed.site.id, 'customer', 'Color'), undefined);
        assert.deepEqual(await tx.metafields.resourcesWithValue(seed.site.id, 'customer', 'Colour', 'red'), [
          seed.customer.id,
        ]);
        assert.equal(
          (await tx.metafields.findField(seed.site.id, 'customer', 'Colour'))?.name,
          'Colour',
          'the refused rename changed nothing',
        );
      });
    });

    it('deletes a field with every value of it, and only that', async () => {
      const seed = await seedBillingSite(storage(), 'mf-del');
      const second = await secondCustomer(storage(), seed);
      const [gone, kept] = await storage().transaction(async (tx) => [
        await tx.metafields.insertField(fieldFixture(seed.site.id, 'Gone')),
        await tx.metafields.insertField(fieldFixture(seed.site.id, 'Kept')),
      ]);
      assert.ok(gone && kept);
      await setValue(storage(), gone, seed.customer.id, 'a', 1);
      await setValue(storage(), gone, second.id, 'b', 2);
      await setValue(storage(), kept, seed.customer.id, 'c', 3);
      assert.equal(await storage().transaction((tx) => tx.metafields.deleteField(seed.site.id, gone.id)), true);
      assert.equal(await storage().transaction((tx) => tx.metafields.deleteField(seed.site.id, gone.id)), false);
      await storage().transaction(async (tx) => {
        assert.deepEqual(
          (await tx.metafields.listFields(seed.site.id, 'customer')).map((f) => f.name),
          ['Kept'],
        );
        assert.deepEqual(
          (await tx.metafields.listValues(seed.site.id, 'customer', seed.customer.id)).map((v) => v.name),
          ['Kept'],
        );
        assert.deepEqual(await tx.metafields.listValues(seed.site.id, 'customer', second.id), []);
      });
    });

    it('keeps definitions and values to their site, and leaves no trace of a rolled-back transaction', async () => {
      const seed = await seedBillingSite(storage(), 'mf-ten');
      const other = await seedBillingSite(storage(), 'mf-ten-b');
      const field = await storage().transaction((tx) => tx.metafields.insertField(fieldFixture(seed.site.id, 'Color')));
      await setValue(storage(), field, seed.customer.id, 'red', 1);
      await storage().transaction(async (tx) => {
        assert.equal(await tx.metafields.findField(other.site.id, 'customer', 'Color'), undefined);
        assert.deepEqual(await tx.metafields.listFields(other.site.id, 'customer'), []);
        assert.deepEqual(await tx.metafields.listValues(other.site.id, 'customer', seed.customer.id), []);
        assert.equal(await tx.metafields.updateField(other.site.id, field.id, { name: 'Stolen' }), undefined);
        assert.equal(await tx.metafields.deleteField(other.site.id, field.id), false);
        assert.equal(await tx.metafields.deleteValue(other.site.id, 'customer', seed.customer.id, 'Color'), false);
      });
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.metafields.insertField(fieldFixture(seed.site.id, 'Ghost'));
          await tx.metafields.setValue({
            siteId: seed.site.id,
            resourceType: 'customer',
            resourceId: seed.customer.id,
            metafieldId: field.id,
            name: 'Color',
            value: 'blue',
            updatedAt: at(T0, 5),
            now: at(T0, 5),
          });
          await tx.metafields.updateField(seed.site.id, field.id, { name: 'Renamed' });
          throw new Abort('roll back');
        }),
        Abort,
      );
      await storage().transaction(async (tx) => {
        assert.deepEqual(
          (await tx.metafields.listFields(seed.site.id, 'customer')).map((f) => f.name),
          ['Color'],
        );
        assert.deepEqual(
          (await tx.metafields.listValues(seed.site.id, 'customer', seed.customer.id)).map((v) => [v.name, v.value]),
          [['Color', 'red']],
        );
        assert.equal((await tx.metafields.findField(seed.site.id, 'customer', 'Color'))?.name, 'Color');
      });
    });
  });
}
