import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ComponentPricing, componentPrice } from '../../src/domain/catalog/component-pricing.js';
import {
  type AllocationChangeInput,
  allocationChange,
  DOWNGRADE_SCHEMES,
  downgradeScheme,
  PRORATION_MODES,
  type ProrationMode,
  UPGRADE_SCHEMES,
  upgradeScheme,
} from '../../src/domain/components/index.js';
import { BillingError } from '../../src/errors.js';

/** April 2027 has 30 days, so thirds and tenths of it are whole hours. */
const START = new Date('2027-04-01T00:00:00Z');
const END = new Date('2027-05-01T00:00:00Z');
const DAY = 86_400_000;

function change(overrides: Partial<AllocationChangeInput>) {
  return allocationChange({
    previousCostInCents: 1000,
    newCostInCents: 4000,
    periodStart: START,
    periodEnd: END,
    at: new Date(START.getTime() + 10 * DAY),
    upgradeCharge: 'prorated',
    downgradeCredit: 'prorated',
    ...overrides,
  });
}

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof BillingError) return error.message;
    throw error;
  }
  throw new Error('expected a BillingError');
}

describe('allocationChange: fixed cases', () => {
  it('charges two thirds of an upgrade ten days into a 30-day period, and nothing else', () => {
    expect(change({})).toEqual({ direction: 'upgrade', chargeInCents: 2000, creditInCents: 0 });
  });

  it('charges the whole difference with full, and nothing with none', () => {
    expect(change({ upgradeCharge: 'full' })).toEqual({ direction: 'upgrade', chargeInCents: 3000, creditInCents: 0 });
    expect(change({ upgradeCharge: 'none' })).toEqual({ direction: 'upgrade', chargeInCents: 0, creditInCents: 0 });
  });

  it('credits a downgrade by its own mode; the upgrade mode does not apply to it', () => {
    const down = { previousCostInCents: 4000, newCostInCents: 1000 };
    expect(change({ ...down, upgradeCharge: 'none' })).toEqual({
      direction: 'downgrade',
      chargeInCents: 0,
      creditInCents: 2000,
    });
    expect(change({ ...down, downgradeCredit: 'full' }).creditInCents).toBe(3000);
    expect(change({ ...down, downgradeCredit: 'none', upgradeCharge: 'full' })).toEqual({
      direction: 'downgrade',
      chargeInCents: 0,
      creditInCents: 0,
    });
  });

  it('rounds the prorated part half-up to the minor unit', () => {
    const third = new Date(END.getTime() - 10 * DAY);
    // 100 × 1/3 = 33.33 → 33; 200 × 1/3 = 66.67 → 67; 1 × 1/2 = 0.5 → 1.
    expect(change({ previousCostInCents: 0, newCostInCents: 100, at: third }).chargeInCents).toBe(33);
    expect(change({ previousCostInCents: 0, newCostInCents: 200, at: third }).chargeInCents).toBe(67);
    const half = new Date(START.getTime() + 15 * DAY);
    expect(change({ previousCostInCents: 0, newCostInCents: 1, at: half }).chargeInCents).toBe(1);
    expect(change({ previousCostInCents: 3, newCostInCents: 2, at: half }).creditInCents).toBe(1);
  });

  it('gives direction none and nothing when the cost does not move, whatever the modes', () => {
    for (const mode of PRORATION_MODES) {
      expect(
        change({ previousCostInCents: 2500, newCostInCents: 2500, upgradeCharge: mode, downgradeCredit: mode }),
      ).toEqual({ direction: 'none', chargeInCents: 0, creditInCents: 0 });
    }
  });

  it('decides the direction by cost, not quantity: more units in a cheaper stairstep bracket is a downgrade', () => {
    const stairs: ComponentPricing = {
      scheme: 'stairstep',
      brackets: [
        { startingQuantity: 1, endingQuantity: 10, unitPrice: '10' },
        { startingQuantity: 11, endingQuantity: null, unitPrice: '5' },
      ],
    };
    const from5to15 = change({
      previousCostInCents: componentPrice(stairs, 5, 'USD'),
      newCostInCents: componentPrice(stairs, 15, 'USD'),
    });
    expect(from5to15).toEqual({ direction: 'downgrade', chargeInCents: 0, creditInCents: 333 });
    // Fewer units that cost more (volume pricing dropping below a discount bracket) is an upgrade.
    const volume: ComponentPricing = {
      scheme: 'volume',
      brackets: [
        { startingQuantity: 1, endingQuantity: 10, unitPrice: '3' },
        { startingQuantity: 11, endingQuantity: null, unitPrice: '1' },
      ],
    };
    const from12to10 = change({
      previousCostInCents: componentPrice(volume, 12, 'USD'),
      newCostInCents: componentPrice(volume, 10, 'USD'),
      upgradeCharge: 'full',
    });
    expect(from12to10).toEqual({ direction: 'upgrade', chargeInCents: 1800, creditInCents: 0 });
  });

  it('charges in full at the period start and nothing at its end; instants outside are clamped', () => {
    expect(change({ at: START }).chargeInCents).toBe(3000);
    expect(change({ at: END }).chargeInCents).toBe(0);
    expect(change({ at: new Date(START.getTime() - DAY) }).chargeInCents).toBe(3000);
    expect(change({ at: new Date(END.getTime() + DAY) }).chargeInCents).toBe(0);
  });

  it('refuses bad costs, periods and modes', () => {
    expect(messageOf(() => change({ previousCostInCents: 1.5 }))).toBe('Previous cost: must be an integer.');
    expect(messageOf(() => change({ newCostInCents: -1 }))).toBe('Cost: must not be negative.');
    expect(messageOf(() => change({ periodEnd: START }))).toBe('Period: must end after it starts.');
    expect(messageOf(() => change({ at: new Date(Number.NaN) }))).toBe('Period: must be valid instants.');
    expect(messageOf(() => change({ upgradeCharge: 'half' as ProrationMode }))).toBe(
      'Upgrade charge: must be one of full, prorated or none.',
    );
  });
});

describe('classic proration schemes', () => {
  it('maps every upgrade scheme to a charge mode and accrual', () => {
    expect(Object.fromEntries(UPGRADE_SCHEMES.map((name) => [name, upgradeScheme(name)]))).toEqual({
      'prorate-attempt-capture': { upgradeCharge: 'prorated', accrueCharge: false },
      'prorate-delay-capture': { upgradeCharge: 'prorated', accrueCharge: true },
      'full-price-attempt-capture': { upgradeCharge: 'full', accrueCharge: false },
      'full-price-delay-capture': { upgradeCharge: 'full', accrueCharge: true },
      'no-prorate': { upgradeCharge: 'none', accrueCharge: false },
    });
  });

  it('maps the downgrade schemes to a credit mode', () => {
    expect(DOWNGRADE_SCHEMES.map((name) => [name, downgradeScheme(name)])).toEqual([
      ['prorate', 'prorated'],
      ['no-prorate', 'none'],
    ]);
  });

  it('refuses unknown names, including inherited object keys', () => {
    expect(messageOf(() => upgradeScheme('prorate'))).toBe(
      'Proration upgrade scheme: must be one of prorate-attempt-capture, prorate-delay-capture, full-price-attempt-capture, full-price-delay-capture, no-prorate.',
    );
    expect(messageOf(() => upgradeScheme('toString'))).toMatch(/^Proration upgrade scheme:/);
    expect(messageOf(() => downgradeScheme('full'))).toBe(
      'Proration downgrade scheme: must be one of prorate, no-prorate.',
    );
  });
});

describe('allocationChange: properties', () => {
  const cost = fc.integer({ min: 0, max: 10_000_000_000 });
  const mode = fc.constantFrom<ProrationMode>(...PRORATION_MODES);
  // Periods from one second to about 400 days, starting anywhere in 2000-2100.
  const period = fc
    .record({
      start: fc.integer({ min: 946_684_800_000, max: 4_102_444_800_000 }),
      length: fc.integer({ min: 1000, max: 400 * DAY }),
    })
    .map(({ start, length }) => ({ start: new Date(start), end: new Date(start + length), length }));

  it('never charges or credits more than the full difference, and never both', () => {
    fc.assert(
      fc.property(
        cost,
        cost,
        period,
        fc.double({ min: -0.5, max: 1.5, noNaN: true }),
        mode,
        mode,
        (a, b, p, f, up, down) => {
          const at = new Date(p.start.getTime() + Math.round(f * p.length));
          const result = allocationChange({
            previousCostInCents: a,
            newCostInCents: b,
            periodStart: p.start,
            periodEnd: p.end,
            at,
            upgradeCharge: up,
            downgradeCredit: down,
          });
          expect(result.chargeInCents).toBeGreaterThanOrEqual(0);
          expect(result.creditInCents).toBeGreaterThanOrEqual(0);
          expect(result.chargeInCents).toBeLessThanOrEqual(Math.max(0, b - a));
          expect(result.creditInCents).toBeLessThanOrEqual(Math.max(0, a - b));
          expect(result.chargeInCents * result.creditInCents).toBe(0);
          expect(result.direction).toBe(b > a ? 'upgrade' : b < a ? 'downgrade' : 'none');
          if (up === 'full') expect(result.chargeInCents).toBe(Math.max(0, b - a));
        },
      ),
    );
  });

  it('gives 0 for none in its direction, wherever in the period', () => {
    fc.assert(
      fc.property(cost, cost, period, fc.double({ min: 0, max: 1, noNaN: true }), mode, (a, b, p, f, other) => {
        const at = new Date(p.start.getTime() + Math.round(f * p.length));
        const base = { periodStart: p.start, periodEnd: p.end, at };
        expect(
          allocationChange({
            ...base,
            previousCostInCents: a,
            newCostInCents: b,
            upgradeCharge: 'none',
            downgradeCredit: other,
          }).chargeInCents,
        ).toBe(0);
        expect(
          allocationChange({
            ...base,
            previousCostInCents: a,
            newCostInCents: b,
            upgradeCharge: other,
            downgradeCredit: 'none',
          }).creditInCents,
        ).toBe(0);
      }),
    );
  });

  it('splits: the prorated parts of a period cut into pieces sum to the whole within one unit per piece', () => {
    fc.assert(
      fc.property(
        cost,
        cost,
        period,
        fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 12 }),
        (a, b, p, weights) => {
          fc.pre(a !== b);
          // Cut the period into pieces proportional to the weights; the last piece takes the rest.
          const total = weights.reduce((s, w) => s + w, 0);
          const lengths = weights.map((w) => Math.floor((w * p.length) / total));
          lengths[lengths.length - 1]! += p.length - lengths.reduce((s, l) => s + l, 0);
          // A piece of length L is what a change with L left to run is charged (or credited).
          const parts = lengths.map((l) => {
            const r = allocationChange({
              previousCostInCents: a,
              newCostInCents: b,
              periodStart: p.start,
              periodEnd: p.end,
              at: new Date(p.end.getTime() - l),
              upgradeCharge: 'prorated',
              downgradeCredit: 'prorated',
            });
            return r.chargeInCents + r.creditInCents;
          });
          const sum = parts.reduce((s, x) => s + x, 0);
          expect(Math.abs(sum - Math.abs(b - a))).toBeLessThanOrEqual(lengths.length);
        },
      ),
    );
  });

  it('charges less (or the same) the later in the period the change happens', () => {
    fc.assert(
      fc.property(
        cost,
        cost,
        period,
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (a, b, p, f, g) => {
          const [early, late] = [Math.min(f, g), Math.max(f, g)].map(
            (x) => new Date(p.start.getTime() + Math.round(x * p.length)),
          );
          const run = (at: Date) =>
            allocationChange({
              previousCostInCents: a,
              newCostInCents: b,
              periodStart: p.start,
              periodEnd: p.end,
              at,
              upgradeCharge: 'prorated',
              downgradeCredit: 'prorated',
            });
          const e = run(early!);
          const l = run(late!);
          expect(l.chargeInCents).toBeLessThanOrEqual(e.chargeInCents);
          expect(l.creditInCents).toBeLessThanOrEqual(e.creditInCents);
        },
      ),
    );
  });
});
