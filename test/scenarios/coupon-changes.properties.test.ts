import type { Storage } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { sqliteHarness } from '../support/sqlite.js';
import { memoryHarness } from '../support/storages.js';
import { couponCommands, couponFixture, periodNet } from './coupon-changes.suite.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const HOUR = 3_600_000;
/** April 2026: 30 days of 720 hours. */
const APRIL = Date.parse('2026-04-01T00:00:00Z');
const PERIOD = 30 * 24 * HOUR;
const PRICES: Readonly<Record<string, number>> = { a: 1000, b: 2500, c: 4000 };
const SEAT = 200;
/** The stacking percentage coupons the property adds and removes (compounding: both give 45% of the price). */
const RATES: Readonly<Record<string, number>> = { HALF: 0.5, TENTH: 0.9 };

type Step =
  | { readonly kind: 'product'; readonly target: 'a' | 'b' | 'c' }
  | { readonly kind: 'seats'; readonly quantity: number }
  | { readonly kind: 'add'; readonly code: 'HALF' | 'TENTH' }
  | { readonly kind: 'remove'; readonly code: 'HALF' | 'TENTH' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('product' as const),
    target: fc.constantFrom('a' as const, 'b' as const, 'c' as const),
  }),
  fc.record({ kind: fc.constant('seats' as const), quantity: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ kind: fc.constant('add' as const), code: fc.constantFrom('HALF' as const, 'TENTH' as const) }),
  fc.record({ kind: fc.constant('remove' as const), code: fc.constantFrom('HALF' as const, 'TENTH' as const) }),
);

const rateOf = (codes: Iterable<string>) => [...codes].reduce((rate, code) => rate * RATES[code]!, 1);

/**
 * For any sequence of product (keeping the period), seat-quantity and coupon changes inside one
 * period: coupon changes bill nothing now; the period's net billing is the segment-by-segment
 * formula at the rate the period was billed with (its signup coupons) within one minor unit per
 * change; no credit exceeds what was paid for the remaining time; and the next renewal bills the
 * coupons the subscription has at the end of the period.
 */
function couponChangeProperty(harness: StorageHarness, numRuns: number): void {
  describe(`coupon changes within a period (${harness.name})`, () => {
    it('the period bills the segment formula and the next renewal the coupons left at its end', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(fc.integer({ min: 1, max: PERIOD / HOUR - 1 }), { minLength: 1, maxLength: 6 }),
          fc.array(step, { minLength: 6, maxLength: 6 }),
          fc.integer({ min: 0, max: 4 }),
          fc.subarray(['HALF', 'TENTH'] as const),
          async (hours, steps, initialSeats, initialCoupons) => {
            const storage: Storage = await harness.create();
            try {
              const f = await couponFixture(storage);
              const acme = f.engine.site('acme');
              const commands = couponCommands(f);
              const { subscription } = await acme.subscriptions.create({
                productHandle: 'a',
                customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
                creditCard: VISA,
                ...(initialCoupons.length > 0 ? { couponCodes: [...initialCoupons] } : {}),
                ...(initialSeats > 0
                  ? { components: [{ componentId: f.seatsId, allocatedQuantity: initialSeats }] }
                  : {}),
              });
              const id = subscription.id;
              // The rate April was billed at: its signup coupons, whatever is added or removed later.
              const rate = rateOf(initialCoupons);
              const coupons = new Set<string>(initialCoupons);
              // Segments of the period: [start in ms, product, seats].
              const segments: [number, string, number][] = [[0, 'a', initialSeats]];
              let changes = 0;
              for (const [i, hour] of [...hours].sort((x, y) => x - y).entries()) {
                const s = steps[i]!;
                const [, product, seats] = segments.at(-1)!;
                const offset = hour * HOUR;
                f.clock.set(new Date(APRIL + offset));
                const remaining = (PERIOD - offset) / PERIOD;
                const before = await periodNet(f, id, 0);
                if (s.kind === 'product') {
                  if (s.target === product) continue;
                  const preview = await acme.subscriptions.previewMigration(id, {
                    productHandle: s.target,
                    preservePeriod: true,
                  });
                  // No credit exceeds what was paid for the remaining time.
                  const paidForRest = (PRICES[product]! + SEAT * seats) * rate * remaining;
                  expect(-preview.proratedAdjustmentInCents).toBeLessThanOrEqual(Math.round(paidForRest) + 1);
                  await acme.subscriptions.migrate(id, { productHandle: s.target, preservePeriod: true });
                  // Preview equals effect.
                  expect((await periodNet(f, id, 0)) - before).toBe(
                    preview.proratedAdjustmentInCents + preview.chargeInCents,
                  );
                  segments.push([offset, s.target, seats]);
                  changes += 1;
                } else if (s.kind === 'seats') {
                  if (s.quantity === seats) continue;
                  const effect = await acme.allocations.allocate(id, f.seatsId, {
                    quantity: s.quantity,
                    upgradeCharge: 'prorated',
                    downgradeCredit: 'prorated',
                  });
                  if (effect.creditInCents > 0) {
                    const paidForRest = SEAT * (seats - s.quantity) * rate * remaining;
                    expect(effect.creditInCents - effect.discountInCents).toBeLessThanOrEqual(
                      Math.round(paidForRest) + 1,
                    );
                  }
                  segments.push([offset, product, s.quantity]);
                  changes += 1;
                } else {
                  const lines = (await acme.subscriptions.transactions(id)).length;
                  if (s.kind === 'add') {
                    if (coupons.has(s.code)) continue;
                    await commands.add(id, [s.code]);
                    coupons.add(s.code);
                  } else {
                    if (!coupons.has(s.code)) continue;
                    await commands.remove(id, s.code);
                    coupons.delete(s.code);
                  }
                  // A coupon change bills nothing now: it takes effect at the next renewal.
                  expect((await acme.subscriptions.transactions(id)).length).toBe(lines);
                  changes += 1;
                }
                expect(await periodNet(f, id, 0)).toBeGreaterThanOrEqual(0);
              }
              let formula = 0;
              for (const [i, [from, product, seats]] of segments.entries()) {
                const to = segments[i + 1]?.[0] ?? PERIOD;
                formula += ((PRICES[product]! + SEAT * seats) * rate * (to - from)) / PERIOD;
              }
              const net = await periodNet(f, id, 0);
              expect(Math.abs(net - formula)).toBeLessThanOrEqual(1 + changes);
              // May is billed in full at the coupons the subscription has now.
              f.clock.set('2026-05-01T00:00:01Z');
              expect(await f.engine.runDue()).toMatchObject({ renewed: 1, errors: 0 });
              const [, product, seats] = segments.at(-1)!;
              const may = (PRICES[product]! + SEAT * seats) * rateOf(coupons);
              expect(Math.abs((await periodNet(f, id, 1)) - may)).toBeLessThanOrEqual(1);
            } finally {
              await (harness.destroy ? harness.destroy(storage) : storage.close());
            }
          },
        ),
        { numRuns },
      );
    }, 300_000);
  });
}

afterAll(closePostgresTestServer);
couponChangeProperty(memoryHarness, 40);
couponChangeProperty(sqliteHarness, 5);
couponChangeProperty(postgresHarness(), 4);
