import { createMemoryStorage } from 'billing-engine/adapters/memory';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import {
  bracketFor,
  type ComponentPricing,
  componentPrice,
  validateBrackets,
} from '../../src/domain/catalog/component-pricing.js';
import { computeDiscount, type DiscountCoupon } from '../../src/domain/catalog/coupon-discount.js';
import { CatalogService, loadProductVersion } from '../../src/services/catalog-service.js';
import { SiteService } from '../../src/services/site-service.js';

/** A unit price of 0.0001 to 100.0000 as an exact 4-place string, built from an integer (no float). */
const unitPrice = fc
  .integer({ min: 1, max: 1_000_000 })
  .map((n) => `${Math.floor(n / 10_000)}.${String(n % 10_000).padStart(4, '0')}`);

/** Valid brackets: contiguous, the first starting anywhere from 1 to 5, the last open-ended or not. */
const brackets = fc
  .record({
    first: fc.integer({ min: 1, max: 5 }),
    spans: fc.array(fc.record({ size: fc.integer({ min: 1, max: 20 }), price: unitPrice }), {
      minLength: 1,
      maxLength: 5,
    }),
    openEnded: fc.boolean(),
  })
  .map(({ first, spans, openEnded }) => {
    let start = first;
    return spans.map(({ size, price }, i) => {
      const bracket = {
        startingQuantity: start,
        endingQuantity: openEnded && i === spans.length - 1 ? null : start + size - 1,
        unitPrice: price,
      };
      start += size;
      return bracket;
    });
  });

const pricingOf = (scheme: ComponentPricing['scheme']) =>
  brackets.map((b): ComponentPricing => ({ scheme, brackets: b }));

/** The highest quantity the brackets price (beyond the last start when open-ended). */
const top = (pricing: ComponentPricing) => {
  const last = pricing.brackets.at(-1)!;
  return last.endingQuantity ?? last.startingQuantity + 30;
};

describe('component pricing properties', () => {
  it('generated brackets are valid, so the properties below are about valid pricings', () => {
    fc.assert(
      fc.property(fc.constantFrom('per_unit', 'volume', 'tiered', 'stairstep' as const), brackets, (scheme, b) => {
        const pricing: ComponentPricing = { scheme, brackets: scheme === 'per_unit' ? b.slice(0, 1) : b };
        expect(validateBrackets(pricing).ok).toBe(true);
      }),
    );
  });

  it('tiered prices never decrease as the quantity grows', () => {
    fc.assert(
      fc.property(pricingOf('tiered'), fc.constantFrom('USD', 'JPY', 'KWD'), (pricing, currency) => {
        let previous = 0;
        for (let q = 0; q <= top(pricing); q++) {
          const price = componentPrice(pricing, q, currency);
          expect(price).toBeGreaterThanOrEqual(previous);
          previous = price;
        }
      }),
    );
  });

  it('volume prices never decrease within a bracket, nor at all when unit prices do not fall between brackets', () => {
    fc.assert(
      fc.property(pricingOf('volume'), (pricing) => {
        for (const bracket of pricing.brackets) {
          const end = bracket.endingQuantity ?? bracket.startingQuantity + 30;
          for (let q = bracket.startingQuantity; q < end; q++) {
            expect(componentPrice(pricing, q + 1, 'USD')).toBeGreaterThanOrEqual(componentPrice(pricing, q, 'USD'));
          }
        }
        const rising: ComponentPricing = {
          scheme: 'volume',
          brackets: [...pricing.brackets]
            .map((b) => b.unitPrice)
            .sort((a, b) => Number(a.replace('.', '')) - Number(b.replace('.', '')))
            .map((price, i) => ({ ...pricing.brackets[i]!, unitPrice: price })),
        };
        let previous = 0;
        for (let q = 0; q <= top(rising); q++) {
          const price = componentPrice(rising, q, 'USD');
          expect(price).toBeGreaterThanOrEqual(previous);
          previous = price;
        }
      }),
    );
  });

  it('volume prices can fall at a bracket boundary when the unit price falls (reference §12.8: 10 units 2000, 11 units 1100)', () => {
    const pricing: ComponentPricing = {
      scheme: 'volume',
      brackets: [
        { startingQuantity: 1, endingQuantity: 10, unitPrice: '2' },
        { startingQuantity: 11, endingQuantity: 20, unitPrice: '1' },
      ],
    };
    expect(componentPrice(pricing, 10, 'USD')).toBe(2000);
    expect(componentPrice(pricing, 11, 'USD')).toBe(1100);
  });

  it('stairstep prices are constant within a bracket and equal to its price', () => {
    fc.assert(
      fc.property(pricingOf('stairstep'), (pricing) => {
        for (const bracket of pricing.brackets) {
          const end = bracket.endingQuantity ?? bracket.startingQuantity + 30;
          const expected = componentPrice(pricing, bracket.startingQuantity, 'USD');
          for (let q = bracket.startingQuantity; q <= end; q++) {
            expect(bracketFor(pricing, q)).toEqual(bracket);
            expect(componentPrice(pricing, q, 'USD')).toBe(expected);
          }
        }
      }),
    );
  });
});

const line = fc.integer({ min: 0, max: 10_000_000 });
const lines = fc
  .array(line, { minLength: 1, maxLength: 6 })
  .map((amounts) => amounts.map((amountInCents, i) => ({ key: `line-${i}`, amountInCents })));
/** A percentage of 0 to 100 with up to 4 places, as an exact string. */
const percentage = fc
  .integer({ min: 0, max: 1_000_000 })
  .map((n) => `${Math.floor(n / 10_000)}.${String(n % 10_000).padStart(4, '0')}`);
const coupon: fc.Arbitrary<DiscountCoupon> = fc.oneof(
  fc.record({
    code: fc.constant('P'),
    percentage,
    amountInCents: fc.constant(null),
    allowNegativeBalance: fc.boolean(),
    compoundingStrategy: fc.constantFrom('compound' as const, 'full-price' as const),
  }),
  fc.record({
    code: fc.constant('A'),
    percentage: fc.constant(null),
    amountInCents: fc.integer({ min: 0, max: 20_000_000 }),
    allowNegativeBalance: fc.boolean(),
  }),
);
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

describe('coupon discount properties', () => {
  it('a percentage discount plus what remains equals the total exactly, the discount rounded half-up once', () => {
    fc.assert(
      fc.property(lines, percentage, (items, pct) => {
        const total = sum(items.map((l) => l.amountInCents));
        const result = computeDiscount(items, [
          { code: 'P', percentage: pct, amountInCents: null, allowNegativeBalance: false },
        ]);
        const remaining = items.map((l, i) => l.amountInCents - result.perLine[i]!.discountInCents);
        expect(result.totalDiscountInCents + sum(remaining)).toBe(total);
        // Independent check in integers: pct has 4 places, so total * pct * 10^4 / 10^6, half-up.
        const scaled = BigInt(total) * BigInt(pct.replace('.', ''));
        const expected = (scaled + 500_000n) / 1_000_000n;
        expect(BigInt(result.totalDiscountInCents)).toBe(expected);
        for (const r of remaining) expect(r).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it('without a negative balance the discount never exceeds the amount, in total or on any line', () => {
    fc.assert(
      fc.property(lines, fc.array(coupon, { maxLength: 4 }), (items, coupons) => {
        const capped = coupons.map((c) => ({ ...c, allowNegativeBalance: false }));
        const result = computeDiscount(items, capped);
        expect(result.totalDiscountInCents).toBeLessThanOrEqual(sum(items.map((l) => l.amountInCents)));
        result.perLine.forEach((l, i) => {
          expect(l.discountInCents).toBeGreaterThanOrEqual(0);
          expect(l.discountInCents).toBeLessThanOrEqual(items[i]!.amountInCents);
        });
      }),
    );
  });

  it('per-line and per-coupon discounts always sum exactly to the total', () => {
    fc.assert(
      fc.property(lines, fc.array(coupon, { maxLength: 4 }), (items, coupons) => {
        const result = computeDiscount(items, coupons);
        expect(sum(result.perLine.map((l) => l.discountInCents))).toBe(result.totalDiscountInCents);
        expect(sum(result.perCoupon.map((c) => c.discountInCents))).toBe(result.totalDiscountInCents);
        for (const c of result.perCoupon) expect(sum(c.perLine.map((l) => l.discountInCents))).toBe(c.discountInCents);
      }),
    );
  });

  it('an amount coupon with a negative balance allowed takes exactly its amount whenever something is due', () => {
    fc.assert(
      fc.property(lines, fc.integer({ min: 0, max: 20_000_000 }), (items, amount) => {
        const total = sum(items.map((l) => l.amountInCents));
        const result = computeDiscount(items, [
          { code: 'A', percentage: null, amountInCents: amount, allowNegativeBalance: true },
        ]);
        expect(result.totalDiscountInCents).toBe(total === 0 ? 0 : amount);
      }),
    );
  });
});

describe('product version properties', () => {
  it('editing a product N times yields N+1 versions and never changes what a pinned version says', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            priceInCents: fc.integer({ min: 0, max: 1_000_000 }),
            name: fc.string({ minLength: 1, maxLength: 12 }),
          }),
          {
            minLength: 0,
            maxLength: 6,
          },
        ),
        async (edits) => {
          const storage = createMemoryStorage();
          const deps = { storage, clock: new ManualClock('2026-01-01T00:00:00Z'), emitter: { emit() {} } };
          await new SiteService(deps).create({ subdomain: 'prop', currency: 'USD' });
          const catalog = new CatalogService(deps);
          const family = await catalog.createFamily('prop', { name: 'Plans' });
          const created = await catalog.createProduct('prop', family.id, {
            name: 'Base',
            priceInCents: 100,
            interval: 1,
          });
          const seen = [created.version];
          for (const [i, edit] of edits.entries()) {
            // The index in the name makes every edit a real change, so each one adds a version.
            const view = await catalog.updateProduct('prop', created.product.id, {
              name: `${edit.name.trim() || 'x'} #${i}`,
              priceInCents: edit.priceInCents,
            });
            seen.push(view.version);
          }
          const current = await catalog.getProduct('prop', created.product.id);
          expect(current.product.currentVersion).toBe(edits.length + 1);
          expect(current.version).toEqual(seen.at(-1));
          await storage.transaction(async (tx) => {
            for (const version of seen) {
              const pinned = await loadProductVersion(tx, current.product.siteId, created.product.id, version.version);
              expect(pinned.version).toEqual(version);
            }
          });
          await storage.close();
        },
      ),
      { numRuns: 25 },
    );
  });
});
