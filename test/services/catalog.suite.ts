import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { CatalogService, copyCatalog, loadProductVersion } from '../../src/services/catalog-service.js';
import { runCommand } from '../../src/services/command-runner.js';
import { ComponentService } from '../../src/services/component-service.js';
import { CouponService, redeemForSignup } from '../../src/services/coupon-service.js';
import { MetafieldService, setMetadataInCommand } from '../../src/services/metafield-service.js';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/** The catalog services over the fixture's storage and clock (the engine's site handle does not expose them yet). */
function services(f: EngineFixture) {
  const deps = { storage: f.storage, clock: f.clock, emitter: { emit() {} } };
  return {
    deps,
    catalog: new CatalogService(deps),
    components: new ComponentService(deps),
    coupons: new CouponService(deps),
    metafields: new MetafieldService(deps),
  };
}

async function site(f: EngineFixture, subdomain = 'acme') {
  const created = await f.engine.sites.create({ subdomain, currency: 'USD', timeZone: 'America/New_York' });
  return created.site;
}

const TIERED = [
  { startingQuantity: 1, endingQuantity: 10, unitPrice: '2' },
  { startingQuantity: 11, endingQuantity: 20, unitPrice: '1' },
];

/** Engine-level behaviour of families, products, components, coupons and metafields, on every adapter. */
export function catalogSuite(harness: StorageHarness): void {
  describe(`catalog (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-02-10T15:00:00Z');

    describe('product families', () => {
      it('generates handles from names with a deterministic suffix, and finds families by id or handle', async () => {
        const f = fixture();
        await site(f);
        const { catalog } = services(f);
        const first = await catalog.createFamily('acme', { name: 'Pro Plans!', description: 'All of them' });
        const second = await catalog.createFamily('acme', { name: 'pro plans' });
        const third = await catalog.createFamily('acme', { name: 'Pro  Plans' });
        expect([first.handle, second.handle, third.handle]).toEqual(['pro-plans', 'pro-plans-2', 'pro-plans-3']);
        expect(first.description).toBe('All of them');
        expect(await catalog.getFamily('acme', 'pro-plans-2')).toEqual(second);
        expect(await catalog.getFamily('acme', first.id)).toEqual(first);
        expect((await rejection(catalog.getFamily('acme', 'nope'))).code).toBe('not_found');
        expect((await catalog.listFamilies('acme')).map((x) => x.id)).toEqual([first.id, second.id, third.id]);
      });

      it('refuses a missing name, a bad handle and a taken handle without a trace', async () => {
        const f = fixture();
        const s = await site(f);
        const { catalog } = services(f);
        await catalog.createFamily('acme', { name: 'Plans', handle: 'plans' });
        const blank = await rejection(catalog.createFamily('acme', { name: '  ', handle: 'Bad Handle' }));
        expect(blank.code).toBe('validation');
        expect(blank.messages).toEqual([
          'Name: cannot be blank.',
          'API Handle: must start with a letter or number and may only contain lowercase letters, numbers, underscores and dashes.',
        ]);
        const taken = await rejection(catalog.createFamily('acme', { name: 'Other', handle: 'plans' }));
        expect(taken.messages).toEqual(['API Handle: must be unique - that value has been taken.']);
        expect(taken.httpStatus).toBe(422);
        const stored = await f.storage.transaction((tx) => tx.catalog.listFamilies(s.id));
        expect(stored.map((x) => x.name)).toEqual(['Plans']);
      });

      it('validates family updates before touching storage, and applies them where the port can', async () => {
        const f = fixture();
        const s = await site(f);
        const { catalog } = services(f);
        const family = await catalog.createFamily('acme', { name: 'Plans' });
        await catalog.createFamily('acme', { name: 'Other', handle: 'other' });
        expect((await rejection(catalog.updateFamily('acme', family.id, { name: '' }))).messages).toEqual([
          'Name: cannot be blank.',
        ]);
        const supported = await f.storage.transaction(
          async (tx) => typeof (tx.catalog as unknown as Record<string, unknown>).updateFamily === 'function',
        );
        if (!supported) {
          // Until CatalogRepository.updateFamily exists the update fails loudly rather than pretending.
          expect((await rejection(catalog.updateFamily('acme', family.id, { name: 'Renamed' }))).code).toBe('internal');
          return;
        }
        const updated = await catalog.updateFamily('acme', family.id, { name: 'Renamed', description: 'New' });
        expect(updated).toMatchObject({ id: family.id, name: 'Renamed', handle: 'plans', description: 'New' });
        const taken = await rejection(catalog.updateFamily('acme', family.id, { handle: 'other' }));
        expect(taken.messages).toEqual(['API Handle: must be unique - that value has been taken.']);
        expect((await f.storage.transaction((tx) => tx.catalog.findFamily(s.id, family.id)))?.handle).toBe('plans');
      });
    });

    describe('products', () => {
      it('creates a product with every field of the spec and the billing terms', async () => {
        const f = fixture();
        await site(f);
        const { catalog } = services(f);
        const family = await catalog.createFamily('acme', { name: 'Plans' });
        const view = await catalog.createProduct('acme', family.handle, {
          name: 'Gold',
          description: 'The best',
          accountingCode: 'GOLD-1',
          priceInCents: '4999',
          interval: 14,
          intervalUnit: 'days',
          trialInterval: 7,
          trialIntervalUnit: 'day',
          initialChargeInCents: 1500,
          initialChargeAfterTrial: true,
          expirationInterval: 12,
          requestCreditCard: true,
          requireCreditCard: false,
          taxable: true,
        });
        expect(view.product).toMatchObject({
          handle: 'gold',
          familyId: family.id,
          currentVersion: 1,
          archivedAt: null,
        });
        expect(view.version.terms).toEqual({
          name: 'Gold',
          description: 'The best',
          accountingCode: 'GOLD-1',
          priceInCents: 4999,
          interval: 14,
          intervalUnit: 'day',
          trialPriceInCents: 0,
          trialInterval: 7,
          trialIntervalUnit: 'day',
          initialChargeInCents: 1500,
          initialChargeAfterTrial: true,
          expirationInterval: 12,
          expirationIntervalUnit: 'month',
          requestCreditCard: true,
          requireCreditCard: false,
          taxable: true,
        });
      });

      it('refuses bad product input with every message at once, leaving no product behind', async () => {
        const f = fixture();
        const s = await site(f);
        const { catalog } = services(f);
        const family = await catalog.createFamily('acme', { name: 'Plans' });
        const error = await rejection(
          catalog.createProduct('acme', family.id, {
            name: '',
            priceInCents: -5,
            interval: 0,
            intervalUnit: 'week' as never,
            trialPriceInCents: 100,
            taxable: 'yes' as never,
          }),
        );
        expect(error.messages).toEqual([
          'Name: cannot be blank.',
          'Price in cents: must be greater than or equal to 0.',
          'Interval: must be a whole number greater than 0.',
          "Interval unit: must be 'month' or 'day'.",
          'Trial interval: cannot be blank when a trial price or trial interval unit is given.',
          'Taxable: must be true or false.',
        ]);
        expect((await rejection(catalog.createProduct('acme', family.id, { name: 'X' }))).messages).toEqual([
          'Price in cents: cannot be blank.',
          'Interval: cannot be blank.',
        ]);
        await catalog.createProduct('acme', family.id, { name: 'Basic', priceInCents: 1000, interval: 1 });
        const taken = await rejection(
          catalog.createProduct('acme', family.id, { name: 'Other', handle: 'basic', priceInCents: 1, interval: 1 }),
        );
        expect(taken.messages).toEqual(['API Handle: must be unique - that value has been taken.']);
        expect(
          (await rejection(catalog.createProduct('acme', 999, { name: 'X', priceInCents: 1, interval: 1 }))).code,
        ).toBe('not_found');
        const products = await f.storage.transaction((tx) => tx.catalog.listProducts(s.id));
        expect(products.map((p) => p.handle)).toEqual(['basic']);
      });

      it('versions every change, reads only the current version, and keeps pinned versions for billing', async () => {
        const f = fixture();
        const s = await site(f);
        const { catalog } = services(f);
        const family = await catalog.createFamily('acme', { name: 'Plans' });
        const v1 = await catalog.createProduct('acme', family.id, { name: 'Basic', priceInCents: 1000, interval: 1 });
        const sub = await f.engine.site('acme').subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
          creditCard: VISA,
        });
        expect(sub.subscription.productVersion).toBe(1);
        f.clock.advance({ minutes: 1 });
        const v2 = await catalog.updateProduct('acme', 'basic', { priceInCents: 1500 });
        const v3 = await catalog.updateProduct('acme', v1.product.id, { name: 'Basic+', trialInterval: 14 });
        expect(v3.product.currentVersion).toBe(3);
        expect(v3.version.terms).toMatchObject({
          name: 'Basic+',
          priceInCents: 1500,
          trialInterval: 14,
          trialIntervalUnit: 'month',
          trialPriceInCents: 0,
        });
        const read = await catalog.getProduct('acme', 'basic');
        expect(read).toEqual(v3);
        // Updating to the same terms adds no version.
        expect((await catalog.updateProduct('acme', 'basic', { priceInCents: 1500 })).version.version).toBe(3);
        await f.storage.transaction(async (tx) => {
          const pinned = await loadProductVersion(tx, s.id, v1.product.id, sub.subscription.productVersion);
          expect(pinned.version).toEqual(v1.version);
          expect((await loadProductVersion(tx, s.id, v1.product.id, 2)).version).toEqual(v2.version);
          const missing = await rejection(loadProductVersion(tx, s.id, v1.product.id, 4));
          expect(missing.code).toBe('not_found');
        });
        // Clearing the trial clears its unit and price with it.
        const v4 = await catalog.updateProduct('acme', 'basic', { trialInterval: null });
        expect(v4.version.terms).toMatchObject({
          trialInterval: null,
          trialIntervalUnit: null,
          trialPriceInCents: null,
        });
      });

      it('refuses a bad update or a handle change without adding a version', async () => {
        const f = fixture();
        const s = await site(f);
        const { catalog } = services(f);
        const family = await catalog.createFamily('acme', { name: 'Plans' });
        const created = await catalog.createProduct('acme', family.id, {
          name: 'Basic',
          priceInCents: 1000,
          interval: 1,
        });
        expect(
          (await rejection(catalog.updateProduct('acme', 'basic', { priceInCents: -1, name: ' ' }))).messages,
        ).toEqual(['Name: cannot be blank.', 'Price in cents: must be greater than or equal to 0.']);
        expect((await rejection(catalog.updateProduct('acme', 'basic', { handle: 'renamed' }))).messages).toEqual([
          'API Handle: cannot be changed once the product exists.',
        ]);
        const stored = await f.storage.transaction((tx) => tx.catalog.findProduct(s.id, created.product.id));
        expect(stored?.currentVersion).toBe(1);
        expect(
          await f.storage.transaction((tx) => tx.catalog.findProductVersion(s.id, created.product.id, 2)),
        ).toBeUndefined();
      });

      it('archives and unarchives products; lists hide archived ones unless asked', async () => {
        const f = fixture();
        await site(f);
        const { catalog } = services(f);
        const plans = await catalog.createFamily('acme', { name: 'Plans' });
        const addons = await catalog.createFamily('acme', { name: 'Addons' });
        const basic = await catalog.createProduct('acme', plans.id, { name: 'Basic', priceInCents: 1000, interval: 1 });
        await catalog.createProduct('acme', plans.id, { name: 'Pro', priceInCents: 2000, interval: 1 });
        await catalog.createProduct('acme', addons.id, { name: 'Extra', priceInCents: 100, interval: 1 });
        const archived = await catalog.archiveProduct('acme', 'basic');
        expect(archived.product.archivedAt?.toISOString()).toBe('2026-02-10T15:00:00.000Z');
        f.clock.advance({ hours: 1 });
        expect((await catalog.archiveProduct('acme', basic.product.id)).product.archivedAt?.toISOString()).toBe(
          '2026-02-10T15:00:00.000Z',
        );
        expect((await catalog.listProducts('acme')).map((p) => p.product.handle)).toEqual(['pro', 'extra']);
        expect(
          (await catalog.listProducts('acme', { familyId: 'plans', includeArchived: true })).map(
            (p) => p.product.handle,
          ),
        ).toEqual(['basic', 'pro']);
        const signup = await rejection(
          f.engine.site('acme').subscriptions.create({
            productHandle: 'basic',
            customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
            creditCard: VISA,
          }),
        );
        expect(signup.messages).toContain('Product: has been archived and cannot be subscribed to.');
        expect((await catalog.unarchiveProduct('acme', 'basic')).product.archivedAt).toBeNull();
        expect((await catalog.listProducts('acme', { familyId: plans.id })).map((p) => p.product.handle)).toEqual([
          'basic',
          'pro',
        ]);
      });
    });

    describe('components', () => {
      it('creates a tiered component, prices previews, and versions pricing changes only', async () => {
        const f = fixture();
        const s = await site(f);
        const { catalog, components } = services(f);
        const family = await catalog.createFamily('acme', { name: 'Plans' });
        const seats = await components.create('acme', family.id, {
          name: 'Seats',
          kind: 'quantity_based',
          unitName: 'seat',
          handle: 'seats',
          pricingScheme: 'tiered',
          prices: TIERED,
        });
        expect(seats.component).toMatchObject({
          kind: 'quantity_based_component',
          unitName: 'seat',
          currentVersion: 1,
          familyId: family.id,
        });
        expect((await components.price('acme', 'seats', 15)).priceInCents).toBe(2500);
        const renamed = await components.update('acme', 'seats', { name: 'Users', unitName: 'user' });
        expect(renamed.component).toMatchObject({ name: 'Users', unitName: 'user', currentVersion: 1 });
        const repriced = await components.update('acme', seats.component.id, { pricingScheme: 'volume' });
        expect(repriced.version).toMatchObject({ version: 2, pricing: { scheme: 'volume', brackets: TIERED } });
        expect(await components.price('acme', 'seats', 15)).toEqual({
          componentId: seats.component.id,
          version: 2,
          quantity: 15,
          currency: 'USD',
          priceInCents: 1500,
        });
        expect((await components.price('acme', 'seats', 15, { version: 1 })).priceInCents).toBe(2500);
        // The same pricing written differently is no change.
        const same = await components.update('acme', 'seats', {
          prices: TIERED.map((b) => ({ ...b, unitPrice: `${b.unitPrice}.00` })),
        });
        expect(same.version.version).toBe(2);
        const unit = await components.update('acme', 'seats', { unitPrice: '0.0125' });
        expect(unit.version.pricing).toEqual({
          scheme: 'per_unit',
          brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice: '0.0125' }],
        });
        expect((await components.get('acme', seats.component.id)).version.version).toBe(3);
        const stored = await f.storage.transaction((tx) => tx.components.findVersion(s.id, seats.component.id, 1));
        expect(stored?.pricing.scheme).toBe('tiered');
      });

      it('refuses bad brackets, kinds and handles without a trace', async () => {
        const f = fixture();
        const s = await site(f);
        const { catalog, components } = services(f);
        const family = await catalog.createFamily('acme', { name: 'Plans' });
        const overlap = await rejection(
          components.create('acme', family.id, {
            name: 'Seats',
            kind: 'quantity_based_component',
            unitName: 'seat',
            pricingScheme: 'tiered',
            prices: [
              { startingQuantity: 1, endingQuantity: 10, unitPrice: '2' },
              { startingQuantity: 5, endingQuantity: null, unitPrice: '-1' },
            ],
          }),
        );
        expect(overlap.messages).toEqual(['Unit price: must be at least 0.0001.', 'Prices: must not overlap.']);
        const bad = await rejection(
          components.create('acme', family.id, { name: '', kind: 'bogus' as never, unitPrice: '1' }),
        );
        expect(bad.messages).toEqual([
          "Kind: 'bogus' is not a component kind.",
          'Name: cannot be blank.',
          'Unit name: cannot be blank.',
        ]);
        const onOff = await rejection(
          components.create('acme', family.id, {
            name: 'SSL',
            kind: 'on_off',
            pricingScheme: 'tiered',
            prices: TIERED,
          }),
        );
        expect(onOff.messages).toEqual(['Pricing scheme: an on/off component is priced per unit.']);
        const noPrice = await rejection(
          components.create('acme', family.id, { name: 'GB', kind: 'metered', unitName: 'GB' }),
        );
        expect(noPrice.messages).toEqual(['Prices: at least one price bracket is required.']);
        await components.create('acme', family.id, { name: 'SSL', kind: 'on_off', unitPrice: '9.99', handle: 'ssl' });
        const taken = await rejection(
          components.create('acme', family.id, { name: 'Other', kind: 'on_off', unitPrice: '1', handle: 'ssl' }),
        );
        expect(taken.messages).toEqual(['API Handle: must be unique - that value has been taken.']);
        const badUpdate = await rejection(
          components.update('acme', 'ssl', {
            prices: [
              { startingQuantity: 1, endingQuantity: 5, unitPrice: '1' },
              { startingQuantity: 7, unitPrice: '1' },
            ],
          }),
        );
        expect(badUpdate.messages).toEqual([
          'Prices: a per-unit component has exactly one price bracket.',
          'Prices: must not have gaps.',
        ]);
        expect(
          (await rejection(components.create('acme', 999, { name: 'X', kind: 'on_off', unitPrice: '1' }))).code,
        ).toBe('not_found');
        const stored = await f.storage.transaction((tx) => tx.components.list(s.id));
        expect(stored.map((c) => [c.name, c.unitName, c.currentVersion])).toEqual([['SSL', 'on/off', 1]]);
      });

      it('archives components and lists them per family', async () => {
        const f = fixture();
        await site(f);
        const { catalog, components } = services(f);
        const a = await catalog.createFamily('acme', { name: 'A' });
        const b = await catalog.createFamily('acme', { name: 'B' });
        const one = await components.create('acme', a.id, {
          name: 'One',
          kind: 'metered',
          unitName: 'call',
          unitPrice: '0.001',
        });
        await components.create('acme', b.id, { name: 'Two', kind: 'metered', unitName: 'call', unitPrice: '0.002' });
        await components.archive('acme', one.component.id);
        expect((await components.list('acme')).map((c) => c.component.name)).toEqual(['Two']);
        expect(
          (await components.list('acme', { familyId: a.id, includeArchived: true })).map((c) => c.component.name),
        ).toEqual(['One']);
        expect((await components.unarchive('acme', one.component.id)).component.archivedAt).toBeNull();
        expect((await components.price('acme', one.component.id, 1500)).priceInCents).toBe(150);
      });
    });

    describe('coupons', () => {
      async function withFamilies(f: EngineFixture) {
        const s = await site(f);
        const svc = services(f);
        const first = await svc.catalog.createFamily('acme', { name: 'First' });
        const second = await svc.catalog.createFamily('acme', { name: 'Second' });
        return { s, ...svc, first, second };
      }

      it('creates coupons in the first family by default, with normalised codes', async () => {
        const f = fixture();
        const { coupons, first, second } = await withFamilies(f);
        const percent = await coupons.create('acme', {
          name: '12.5% off',
          code: ' save12 ',
          percentage: '12.5',
          recurring: true,
          durationPeriodCount: 3,
        });
        expect(percent).toMatchObject({
          familyId: first.id,
          code: 'SAVE12',
          percentage: '12.5',
          amountInCents: null,
          recurring: true,
          durationPeriodCount: 3,
          allowNegativeBalance: false,
          stackable: false,
          compoundingStrategy: 'compound',
          conversionLimit: null,
          redemptions: 0,
        });
        const flat = await coupons.create('acme', {
          name: '$10',
          code: 'TEN',
          amount: '10.00',
          productFamilyId: 'second',
          stackable: true,
          compoundingStrategy: 'full_price',
        });
        expect(flat).toMatchObject({
          familyId: second.id,
          amountInCents: 1000,
          percentage: null,
          compoundingStrategy: 'full-price',
        });
        expect(await coupons.findByCode('acme', 'ten')).toEqual(flat);
        expect(await coupons.get('acme', percent.id)).toEqual(percent);
      });

      it('refuses bad coupons with the service-style messages and leaves nothing behind', async () => {
        const f = fixture();
        const { s, coupons } = await withFamilies(f);
        await coupons.create('acme', { name: 'Ten', code: 'TEN', amountInCents: 1000 });
        const cases: [Parameters<CouponService['create']>[1], string[]][] = [
          [{ name: 'X', code: 'ten', percentage: 10 }, ['Code: must be unique - that value has been taken.']],
          [
            { name: 'X', code: 'BOTH', percentage: 10, amountInCents: 100 },
            ['Percentage or amount: only one of them may be set.'],
          ],
          [{ name: 'X', code: 'NONE' }, ['Percentage or amount: one of them must be set.']],
          [{ name: 'X', code: 'BIG', percentage: '100.01' }, ['Percentage: must be between 0 and 100.']],
          [{ name: 'X', code: 'NEG', percentage: -1 }, ['Percentage: must be between 0 and 100.']],
          [
            { name: 'X', code: 'NEGAMT', amountInCents: -100 },
            ['Amount in cents: must be greater than or equal to 0.'],
          ],
          [
            { name: '', code: 'bad code!', percentage: 5, conversionLimit: 0 },
            [
              'Name: cannot be blank.',
              'Code: may contain only letters, numbers and the characters _ % @ + - .',
              'Conversion limit: must be a whole number greater than 0.',
            ],
          ],
          [
            { name: 'X', code: 'DUR', percentage: 5, durationPeriodCount: 2 },
            ['Duration period count: can only be set on a recurring coupon.'],
          ],
          [
            { name: 'X', code: 'FAM', percentage: 5, productFamilyId: 999 },
            ["Product family: '999' does not exist for this site."],
          ],
          [{ name: 'X', code: 'DATE', percentage: 5, endDate: 'tomorrow' }, ['End date: is not a valid date.']],
        ];
        for (const [input, messages] of cases) {
          const error = await rejection(coupons.create('acme', input));
          expect(error.code).toBe('validation');
          expect(error.messages).toEqual(messages);
        }
        const stored = await f.storage.transaction((tx) => tx.coupons.list(s.id, { page: 1, perPage: 200 }));
        expect(stored.map((c) => c.code)).toEqual(['TEN']);
      });

      it('needs a family to put a coupon in', async () => {
        const f = fixture();
        await site(f);
        const { coupons } = services(f);
        expect((await rejection(coupons.create('acme', { name: 'X', code: 'X', percentage: 5 }))).messages).toEqual([
          'Product family: cannot be blank; create a product family first.',
        ]);
      });

      it('updates coupons, swapping the kind of discount, and archives them', async () => {
        const f = fixture();
        const { coupons, second } = await withFamilies(f);
        const coupon = await coupons.create('acme', {
          name: 'Ten',
          code: 'TEN',
          percentage: 10,
          recurring: true,
          durationPeriodCount: 2,
        });
        const flat = await coupons.update('acme', coupon.id, {
          amountInCents: 500,
          productFamilyId: second.id,
          recurring: false,
        });
        expect(flat).toMatchObject({
          percentage: null,
          amountInCents: 500,
          familyId: second.id,
          recurring: false,
          durationPeriodCount: null,
        });
        expect((await rejection(coupons.update('acme', coupon.id, { amountInCents: null }))).messages).toEqual([
          'Percentage or amount: one of them must be set.',
        ]);
        expect((await coupons.get('acme', coupon.id)).amountInCents).toBe(500);
        const archived = await coupons.archive('acme', coupon.id);
        expect(archived.archivedAt?.toISOString()).toBe('2026-02-10T15:00:00.000Z');
        expect((await rejection(coupons.update('acme', 999, { name: 'x' }))).code).toBe('not_found');
      });

      it('validates codes: found, not found (C5), wrong family, archived, expired at the end of the day in the site zone', async () => {
        const f = fixture();
        const { coupons, first, second } = await withFamilies(f);
        const coupon = await coupons.create('acme', {
          name: 'Feb',
          code: 'FEB',
          percentage: 10,
          endDate: '2026-02-10',
          productFamilyId: first.id,
        });
        // End of 2026-02-10 in New York (EST, UTC-5) is 04:59:59.999Z on the 11th.
        expect(coupon.endDate?.toISOString()).toBe('2026-02-11T04:59:59.999Z');
        expect(await coupons.validate('acme', 'feb')).toEqual(coupon);
        expect(
          await coupons.validate('acme', 'FEB', {
            productFamilyId: first.handle,
            at: new Date('2026-02-11T04:59:59.999Z'),
          }),
        ).toEqual(coupon);
        const nope = await rejection(coupons.validate('acme', 'NOPE'));
        expect([nope.code, nope.httpStatus, nope.shape, nope.message]).toEqual([
          'not_found',
          404,
          'string',
          'Coupon code could not be found.',
        ]);
        const wrongFamily = await rejection(coupons.validate('acme', 'FEB', { productFamilyId: second.id }));
        expect([wrongFamily.httpStatus, wrongFamily.shape, wrongFamily.message]).toEqual([
          404,
          'string',
          'Coupon code could not be found.',
        ]);
        const expired = await rejection(coupons.validate('acme', 'FEB', { at: new Date('2026-02-11T05:00:00.000Z') }));
        expect([expired.httpStatus, expired.shape, expired.message]).toEqual([
          404,
          'string',
          'Coupon code has expired.',
        ]);
        await coupons.archive('acme', coupon.id);
        expect((await rejection(coupons.validate('acme', 'FEB'))).message).toBe('Coupon is invalid.');
        expect((await rejection(coupons.findByCode('acme', 'NOPE'))).httpStatus).toBe(404);
      });

      it('redeems at signup with the service messages (C4) and enforces the limit atomically', async () => {
        const f = fixture();
        const { s, coupons, first, second, deps } = await withFamilies(f);
        const limited = await coupons.create('acme', {
          name: 'Three',
          code: 'THREE',
          amountInCents: 100,
          conversionLimit: 3,
          productFamilyId: first.id,
        });
        const redeem = (code: string, familyId: number) =>
          runCommand(deps, ({ tx, now }) => redeemForSignup(tx, s.id, code, familyId, now));
        const missing = await rejection(redeem('abc', first.id));
        expect([missing.code, missing.httpStatus, missing.shape, missing.messages]).toEqual([
          'validation',
          422,
          'list',
          ["Coupon Code: 'abc' - Coupon code could not be found."],
        ]);
        expect((await rejection(redeem('three', second.id))).messages).toEqual([
          "Coupon Code: 'three' - Coupon code could not be found.",
        ]);
        const results = await Promise.allSettled(Array.from({ length: 10 }, () => redeem('three', first.id)));
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(3);
        for (const loss of lost)
          expect(loss.reason.messages).toEqual(["Coupon Code: 'three' - Coupon has reached its usage limit."]);
        expect((await coupons.get('acme', limited.id)).redemptions).toBe(3);
        const full = await rejection(coupons.validate('acme', 'THREE'));
        expect(full.message).toBe('Coupon has reached its usage limit.');
        // A signup that fails after redeeming rolls the redemption back.
        const other = await coupons.create('acme', { name: 'One', code: 'ONE', percentage: 5, conversionLimit: 1 });
        await expect(
          runCommand(deps, async ({ tx, now }) => {
            await redeemForSignup(tx, s.id, 'ONE', first.id, now);
            throw new Error('card declined later in the signup');
          }),
        ).rejects.toThrow('card declined');
        expect((await coupons.get('acme', other.id)).redemptions).toBe(0);
        f.clock.set('2030-01-01T00:00:00Z');
        await coupons.update('acme', other.id, { endDate: '2029-12-30' });
        expect((await rejection(redeem('ONE', first.id))).messages).toEqual([
          "Coupon Code: 'ONE' - Coupon code could not be found.",
        ]);
      });

      it('lists coupons 30 a page by default, clamping large pages to 200', async () => {
        const f = fixture();
        const { coupons } = await withFamilies(f);
        for (let i = 0; i < 35; i++) await coupons.create('acme', { name: `C${i}`, code: `C${i}`, percentage: 1 });
        expect(await coupons.list('acme')).toHaveLength(30);
        expect((await coupons.list('acme', { page: 2 })).map((c) => c.code)).toEqual([
          'C30',
          'C31',
          'C32',
          'C33',
          'C34',
        ]);
        expect(await coupons.list('acme', { perPage: 500 })).toHaveLength(35);
        expect(await coupons.list('acme', { page: 3 })).toEqual([]);
        expect((await rejection(coupons.list('acme', { page: 0 }))).messages).toEqual([
          'Page: must be a whole number greater than 0.',
        ]);
      });
    });

    describe('metafields and metadata', () => {
      async function withCustomer(f: EngineFixture) {
        const s = await site(f);
        const customer = await f.engine
          .site('acme')
          .customers.create({ firstName: 'Ada', lastName: 'L', email: 'ada@example.com' });
        return { s, customer, ...services(f) };
      }

      it('creates one or many fields with scope and allowed values', async () => {
        const f = fixture();
        const { metafields } = await withCustomer(f);
        const [color] = await metafields.createFields('acme', 'customers', {
          name: 'Color',
          inputType: 'dropdown',
          enum: ['red', 'blue', 'red'],
          scope: { hosted: ['1', 'all'], csv: '1', invoices: 0, statements: true },
        });
        expect(color).toMatchObject({
          resourceType: 'customer',
          name: 'Color',
          inputType: 'dropdown',
          enumValues: ['red', 'blue'],
          scope: { hosted: ['all'], csv: true, invoices: false, statements: true, portal: false },
        });
        const many = await metafields.createFields('acme', 'customer', [
          { name: 'Notes' },
          { name: 'Size', inputType: 'radio', enum: ['S', 'M'] },
        ]);
        expect(many.map((m) => [m.name, m.inputType])).toEqual([
          ['Notes', 'text'],
          ['Size', 'radio'],
        ]);
        expect((await metafields.listFields('acme', 'customer')).map((m) => m.name)).toEqual([
          'Color',
          'Notes',
          'Size',
        ]);
        expect(await metafields.listFields('acme', 'subscription')).toEqual([]);
      });

      it('refuses bad fields, creating none of a batch', async () => {
        const f = fixture();
        const { s, metafields } = await withCustomer(f);
        await metafields.createFields('acme', 'customer', { name: 'Color' });
        const batch = await rejection(
          metafields.createFields('acme', 'customer', [{ name: 'Fine' }, { name: 'Color' }]),
        );
        expect(batch.messages).toEqual(['Name: must be unique - that value has been taken.']);
        const bad = await rejection(
          metafields.createFields('acme', 'customer', [
            { name: '' },
            { name: 'D', inputType: 'dropdown' },
            { name: 'T', enum: ['a'] },
            { name: 'S', scope: { csv: 'yes' as never } },
          ]),
        );
        expect(bad.messages).toEqual([
          'Name: cannot be blank.',
          'Enum: cannot be blank for dropdown and radio fields.',
          'Enum: can only be set on dropdown and radio fields.',
          'Scope csv: must be "1" or "0".',
        ]);
        expect((await rejection(metafields.createFields('acme', 'invoice' as never, { name: 'X' }))).messages).toEqual([
          "Resource type: must be 'customer' or 'subscription'.",
        ]);
        const stored = await f.storage.transaction((tx) => tx.metafields.listFields(s.id, 'customer'));
        expect(stored.map((m) => m.name)).toEqual(['Color']);
      });

      it('sets, lists, updates and deletes values, only for existing fields and allowed values', async () => {
        const f = fixture();
        const { s, customer, metafields } = await withCustomer(f);
        await metafields.createFields('acme', 'customer', [
          { name: 'Color', inputType: 'dropdown', enum: ['red', 'blue'] },
          { name: 'Seats' },
        ]);
        const set = await metafields.setMetadata('acme', 'customer', customer.id, [
          { name: 'Seats', value: 12 },
          { name: 'Color', value: 'red' },
        ]);
        expect(set.map((m) => [m.name, m.value])).toEqual([
          ['Color', 'red'],
          ['Seats', '12'],
        ]);
        const error = await rejection(
          metafields.setMetadata('acme', 'customer', customer.id, [
            { name: 'x', value: '1' },
            { name: 'Color', value: 'green' },
            { name: 'Seats', value: '13' },
          ]),
        );
        expect(error.messages).toEqual([
          "Metafield: 'x' does not exist.",
          "Value: 'green' is not one of the allowed values for 'Color'.",
        ]);
        // Nothing of the rejected batch was written, not even the valid Seats value.
        expect((await metafields.listMetadata('acme', 'customer', customer.id)).map((m) => m.value)).toEqual([
          'red',
          '12',
        ]);
        const updated = await metafields.updateMetadata('acme', 'customers', customer.id, [
          { name: 'Color', value: 'blue' },
        ]);
        expect(updated.map((m) => m.value)).toEqual(['blue', '12']);
        await metafields.deleteMetadata('acme', 'customer', customer.id, 'Seats');
        expect((await metafields.listMetadata('acme', 'customer', customer.id)).map((m) => m.name)).toEqual(['Color']);
        expect((await rejection(metafields.deleteMetadata('acme', 'customer', customer.id, 'Seats'))).code).toBe(
          'not_found',
        );
        expect(
          (await rejection(metafields.setMetadata('acme', 'customer', 999, [{ name: 'Color', value: 'red' }]))).code,
        ).toBe('not_found');
        expect(
          (
            await rejection(
              metafields.setMetadata('acme', 'subscription', customer.id, [{ name: 'Color', value: 'red' }]),
            )
          ).code,
        ).toBe('not_found');
        const stored = await f.storage.transaction((tx) => tx.metafields.listValues(s.id, 'customer', customer.id));
        expect(stored.map((m) => [m.name, m.value])).toEqual([['Color', 'blue']]);
      });

      it('renames and deletes fields together with their values', async () => {
        const f = fixture();
        const { s, customer, metafields } = await withCustomer(f);
        await metafields.createFields('acme', 'customer', [
          { name: 'Color', inputType: 'radio', enum: ['red'] },
          { name: 'Other' },
        ]);
        await metafields.setMetadata('acme', 'customer', customer.id, [{ name: 'Color', value: 'red' }]);
        const renamed = await metafields.updateField('acme', 'customer', 'Color', {
          name: 'Colour',
          inputType: 'text',
        });
        expect(renamed).toMatchObject({ name: 'Colour', inputType: 'text', enumValues: null });
        expect((await metafields.listMetadata('acme', 'customer', customer.id)).map((m) => [m.name, m.value])).toEqual([
          ['Colour', 'red'],
        ]);
        expect(
          (await rejection(metafields.updateField('acme', 'customer', 'Colour', { name: 'Other' }))).messages,
        ).toEqual(['Name: must be unique - that value has been taken.']);
        expect((await rejection(metafields.updateField('acme', 'customer', 'Nope', { name: 'X' }))).message).toBe(
          "Metafield: 'Nope' does not exist.",
        );
        await metafields.deleteField('acme', 'customer', 'Colour');
        expect(await f.storage.transaction((tx) => tx.metafields.listValues(s.id, 'customer', customer.id))).toEqual(
          [],
        );
        expect((await metafields.listFields('acme', 'customer')).map((m) => m.name)).toEqual(['Other']);
      });

      it('sets subscription metadata inside a command for signup, all or nothing', async () => {
        const f = fixture();
        const { s, catalog, metafields, deps } = await withCustomer(f);
        const family = await catalog.createFamily('acme', { name: 'Plans' });
        await catalog.createProduct('acme', family.id, { name: 'Basic', priceInCents: 1000, interval: 1 });
        const sub = await f.engine.site('acme').subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
          creditCard: VISA,
        });
        await metafields.createFields('acme', 'subscription', { name: 'Channel' });
        const written = await runCommand(deps, (ctx) =>
          setMetadataInCommand(ctx, s.id, 'subscription', sub.subscription.id, [{ name: 'Channel', value: 'web' }]),
        );
        expect(written.map((m) => [m.name, m.value, m.resourceId])).toEqual([['Channel', 'web', sub.subscription.id]]);
        const error = await rejection(
          runCommand(deps, (ctx) =>
            setMetadataInCommand(ctx, s.id, 'subscription', sub.subscription.id, [{ name: 'Plan', value: 'x' }]),
          ),
        );
        expect(error.messages).toEqual(["Metafield: 'Plan' does not exist."]);
      });
    });

    describe('site clone', () => {
      it('copies families, current products and components as version 1, and coupons with redemptions reset', async () => {
        const f = fixture();
        const source = await site(f, 'source');
        const target = await site(f, 'target');
        const { catalog, components, coupons, deps } = services(f);
        const family = await catalog.createFamily('source', { name: 'Plans' });
        await catalog.createProduct('source', family.id, { name: 'Basic', priceInCents: 1000, interval: 1 });
        const current = await catalog.updateProduct('source', 'basic', { priceInCents: 1200 });
        await catalog.createProduct('source', family.id, { name: 'Old', priceInCents: 1, interval: 1 });
        await catalog.archiveProduct('source', 'old');
        await components.create('source', family.id, {
          name: 'Seats',
          kind: 'quantity_based',
          unitName: 'seat',
          handle: 'seats',
          pricingScheme: 'tiered',
          prices: TIERED,
        });
        const repriced = await components.update('source', 'seats', { pricingScheme: 'stairstep' });
        const coupon = await coupons.create('source', { name: 'Ten', code: 'TEN', percentage: 10, conversionLimit: 5 });
        await runCommand(deps, ({ tx, now }) => redeemForSignup(tx, source.id, 'TEN', family.id, now));
        const summary = await runCommand(deps, (ctx) => copyCatalog(ctx, source.id, target.id));
        expect(summary).toEqual({ families: 1, products: 2, components: 1, coupons: 1 });

        const copiedFamily = await catalog.getFamily('target', 'plans');
        expect(copiedFamily.id).not.toBe(family.id);
        const basic = await catalog.getProduct('target', 'basic');
        expect(basic.product).toMatchObject({ currentVersion: 1, familyId: copiedFamily.id, siteId: target.id });
        expect(basic.version.terms).toEqual(current.version.terms);
        expect((await catalog.getProduct('target', 'old')).product.archivedAt).not.toBeNull();
        const seats = await components.get('target', 'seats');
        expect(seats.version).toMatchObject({ version: 1, pricing: repriced.version.pricing });
        expect(seats.component.familyId).toBe(copiedFamily.id);
        const copied = await coupons.findByCode('target', 'TEN');
        expect(copied).toMatchObject({
          redemptions: 0,
          familyId: copiedFamily.id,
          conversionLimit: 5,
          percentage: '10',
        });
        expect(copied.id).not.toBe(coupon.id);
        expect((await coupons.get('source', coupon.id)).redemptions).toBe(1);
      });
    });
  });
}
