import { describe, expect, it } from 'vitest';
import {
  bracketFor,
  type ComponentPricing,
  componentPrice,
  parseComponentPricing,
  samePricing,
  validateBrackets,
} from '../../src/domain/catalog/component-pricing.js';
import { BillingError } from '../../src/errors.js';

/** The brackets of reference §12.8. */
const tiered: ComponentPricing = {
  scheme: 'tiered',
  brackets: [
    { startingQuantity: 1, endingQuantity: 10, unitPrice: '2' },
    { startingQuantity: 11, endingQuantity: 20, unitPrice: '1' },
  ],
};
const volume: ComponentPricing = { ...tiered, scheme: 'volume' };
const stairstep: ComponentPricing = {
  scheme: 'stairstep',
  brackets: [
    { startingQuantity: 1, endingQuantity: 10, unitPrice: '10' },
    { startingQuantity: 11, endingQuantity: 20, unitPrice: '20' },
  ],
};

function messagesOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof BillingError) return error.messages;
    throw error;
  }
  throw new Error('expected a validation error');
}

describe('componentPrice: reference §12.8 vectors', () => {
  it.each([
    [5, 1000, 1000, 1000],
    [10, 2000, 2000, 1000],
    [15, 2500, 1500, 2000],
    [20, 3000, 2000, 2000],
  ])('quantity %i costs %i tiered, %i volume, %i stairstep', (quantity, t, v, s) => {
    expect(componentPrice(tiered, quantity, 'USD')).toBe(t);
    expect(componentPrice(volume, quantity, 'USD')).toBe(v);
    expect(componentPrice(stairstep, quantity, 'USD')).toBe(s);
  });
});

describe('componentPrice', () => {
  const perUnit = (unitPrice: string): ComponentPricing => ({
    scheme: 'per_unit',
    brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice }],
  });

  it('multiplies per-unit prices exactly and rounds half-up once, at the end', () => {
    expect(componentPrice(perUnit('0.0125'), 2, 'USD')).toBe(3); // 0.025 -> 0.03
    expect(componentPrice(perUnit('0.0125'), 3, 'USD')).toBe(4); // 0.0375 -> 0.04
    // Rounding each unit (0.0001 -> 0.00) would give 0; rounding the sum (0.005) gives 1 cent.
    expect(componentPrice(perUnit('0.0001'), 50, 'USD')).toBe(1);
    expect(componentPrice(perUnit('0.0001'), 49, 'USD')).toBe(0);
    expect(componentPrice(perUnit('19.99'), 1_000_000, 'USD')).toBe(1_999_000_000);
  });

  it("rounds to the currency's minor unit: JPY has none, KWD has three", () => {
    expect(componentPrice(perUnit('2.5'), 3, 'JPY')).toBe(8); // 7.5 -> 8
    expect(componentPrice(perUnit('0.0125'), 3, 'KWD')).toBe(38); // 0.0375 -> 0.038
  });

  it('charges nothing for zero units and for units below a first bracket that starts above 1', () => {
    const freeFirstFive: ComponentPricing = {
      scheme: 'tiered',
      brackets: [{ startingQuantity: 6, endingQuantity: null, unitPrice: '3' }],
    };
    expect(componentPrice(freeFirstFive, 0, 'USD')).toBe(0);
    expect(componentPrice(freeFirstFive, 5, 'USD')).toBe(0);
    expect(componentPrice(freeFirstFive, 8, 'USD')).toBe(900);
    expect(componentPrice({ ...freeFirstFive, scheme: 'volume' }, 4, 'USD')).toBe(0);
    expect(componentPrice({ ...freeFirstFive, scheme: 'volume' }, 8, 'USD')).toBe(2400);
    expect(componentPrice({ ...freeFirstFive, scheme: 'stairstep' }, 4, 'USD')).toBe(0);
    expect(componentPrice({ ...freeFirstFive, scheme: 'stairstep' }, 8, 'USD')).toBe(300);
  });

  it('prices an open-ended last bracket for any quantity and refuses one beyond a closed last bracket', () => {
    const open: ComponentPricing = {
      scheme: 'tiered',
      brackets: [
        { startingQuantity: 1, endingQuantity: 10, unitPrice: '2' },
        { startingQuantity: 11, endingQuantity: null, unitPrice: '0.5' },
      ],
    };
    expect(componentPrice(open, 1000, 'USD')).toBe(2000 + 990 * 50);
    expect(messagesOf(() => componentPrice(tiered, 21, 'USD'))).toEqual([
      "Quantity: must be at most 20 for this component's price brackets.",
    ]);
  });

  it('refuses a negative or fractional quantity', () => {
    for (const quantity of [-1, 1.5, Number.NaN]) {
      expect(messagesOf(() => componentPrice(tiered, quantity, 'USD'))).toEqual([
        'Quantity: must be a whole number greater than or equal to 0.',
      ]);
    }
  });

  it('finds the bracket that holds a quantity', () => {
    expect(bracketFor(tiered, 10)?.unitPrice).toBe('2');
    expect(bracketFor(tiered, 11)?.unitPrice).toBe('1');
    expect(bracketFor(tiered, 0)).toBeUndefined();
    expect(bracketFor(tiered, 21)).toBeUndefined();
  });
});

describe('parseComponentPricing and validateBrackets', () => {
  it('reads numbers or strings, sorts brackets and writes unit prices canonically', () => {
    const pricing = parseComponentPricing({
      scheme: 'tiered',
      brackets: [
        { startingQuantity: '11', endingQuantity: null, unitPrice: '1.50' },
        { startingQuantity: 1, endingQuantity: 10, unitPrice: 2 },
      ],
    });
    expect(pricing).toEqual({
      scheme: 'tiered',
      brackets: [
        { startingQuantity: 1, endingQuantity: 10, unitPrice: '2' },
        { startingQuantity: 11, endingQuantity: null, unitPrice: '1.5' },
      ],
    });
  });

  it('accepts a first bracket starting above 1 and the smallest unit price', () => {
    const pricing = parseComponentPricing({
      scheme: 'volume',
      brackets: [{ startingQuantity: 100, endingQuantity: null, unitPrice: '0.0001' }],
    });
    expect(pricing.brackets[0]?.startingQuantity).toBe(100);
    expect(validateBrackets(pricing).ok).toBe(true);
  });

  it.each([
    [
      'overlapping brackets',
      [
        { startingQuantity: 1, endingQuantity: 10, unitPrice: '1' },
        { startingQuantity: 10, endingQuantity: 20, unitPrice: '1' },
      ],
      ['Prices: must not overlap.'],
    ],
    [
      'a gap',
      [
        { startingQuantity: 1, endingQuantity: 10, unitPrice: '1' },
        { startingQuantity: 12, endingQuantity: null, unitPrice: '1' },
      ],
      ['Prices: must not have gaps.'],
    ],
    [
      'an open-ended bracket before another',
      [
        { startingQuantity: 1, endingQuantity: null, unitPrice: '1' },
        { startingQuantity: 11, endingQuantity: 20, unitPrice: '1' },
      ],
      ['Prices: only the last price bracket may be open-ended.'],
    ],
    ['no brackets', [], ['Prices: at least one price bracket is required.']],
    [
      'a price below the minimum, twice, reported once',
      [
        { startingQuantity: 1, endingQuantity: 10, unitPrice: '0.00009' },
        { startingQuantity: 11, endingQuantity: null, unitPrice: '0' },
      ],
      ['Unit price: must be at least 0.0001.'],
    ],
    [
      'a negative price',
      [{ startingQuantity: 1, endingQuantity: null, unitPrice: '-1' }],
      ['Unit price: must be at least 0.0001.'],
    ],
    [
      'too many decimal places',
      [{ startingQuantity: 1, endingQuantity: null, unitPrice: '1.00005' }],
      ['Unit price: must have at most 4 decimal places.'],
    ],
    [
      'a price that is not a number',
      [{ startingQuantity: 1, endingQuantity: null, unitPrice: 'abc' }],
      ['Unit price: is not a number.'],
    ],
    [
      'bad quantities',
      [{ startingQuantity: 0, endingQuantity: -3, unitPrice: '1' }],
      [
        'Starting quantity: must be greater than or equal to 1.',
        'Ending quantity: must be greater than or equal to the starting quantity.',
      ],
    ],
    [
      'a fractional quantity and a missing price',
      [{ startingQuantity: 1.5, endingQuantity: null }],
      ['Starting quantity: must be an integer.', 'Unit price: cannot be blank.'],
    ],
  ])('refuses %s', (_name, brackets, expected) => {
    expect(messagesOf(() => parseComponentPricing({ scheme: 'tiered', brackets }))).toEqual(expected);
  });

  it('requires exactly one bracket for per_unit', () => {
    const two = [
      { startingQuantity: 1, endingQuantity: 10, unitPrice: '1' },
      { startingQuantity: 11, endingQuantity: null, unitPrice: '1' },
    ];
    expect(messagesOf(() => parseComponentPricing({ scheme: 'per_unit', brackets: two }))).toEqual([
      'Prices: a per-unit component has exactly one price bracket.',
    ]);
    expect(messagesOf(() => parseComponentPricing({ scheme: 'per_unit', brackets: [] }))).toEqual([
      'Prices: a per-unit component has exactly one price bracket.',
    ]);
  });

  it('reports a missing or unknown scheme together with bracket problems', () => {
    expect(messagesOf(() => parseComponentPricing({ brackets: [{ startingQuantity: 1, unitPrice: 'x' }] }))).toEqual([
      'Pricing scheme: cannot be blank.',
      'Unit price: is not a number.',
    ]);
    expect(messagesOf(() => parseComponentPricing({ scheme: 'flat', brackets: [] }))).toEqual([
      "Pricing scheme: 'flat' is not one of per_unit, volume, tiered, stairstep.",
    ]);
  });

  it('reports several bracket rules at once on a collector, with their attribute', () => {
    const errors = validateBrackets({
      scheme: 'stairstep',
      brackets: [
        { startingQuantity: 1, endingQuantity: null, unitPrice: '1' },
        { startingQuantity: 5, endingQuantity: 9, unitPrice: '1' },
        { startingQuantity: 12, endingQuantity: 20, unitPrice: '0' },
      ],
    });
    expect(errors.ok).toBe(false);
    try {
      errors.throwIfAny();
    } catch (error) {
      expect((error as BillingError).messages).toEqual([
        'Unit price: must be at least 0.0001.',
        'Prices: only the last price bracket may be open-ended.',
        'Prices: must not have gaps.',
      ]);
      expect((error as BillingError).details[1]?.attribute).toBe('prices');
    }
  });

  it('compares pricings by value, not by how a price is written', () => {
    const a = parseComponentPricing({ scheme: 'per_unit', brackets: [{ startingQuantity: 1, unitPrice: '2.50' }] });
    const b: ComponentPricing = {
      scheme: 'per_unit',
      brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice: '2.5000' }],
    };
    expect(samePricing(a, b)).toBe(true);
    expect(samePricing(a, { ...b, scheme: 'volume' })).toBe(false);
    expect(samePricing(a, { ...b, brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice: '2.51' }] })).toBe(
      false,
    );
  });
});
