import { describe, expect, it } from 'vitest';
import { type BilledLine, unpaidRemainder } from '../../src/billing/assessment.js';

const START = Date.parse('2026-04-01T00:00:00Z');
const HOUR = 3_600_000;
const END = new Date(START + 720 * HOUR);
const at = (hours: number) => new Date(START + hours * HOUR);
const line = (type: string, kind: string | null, amountInCents: number, hours: number): BilledLine => ({
  type,
  kind,
  amountInCents,
  createdAt: at(hours),
});

describe('unpaidRemainder', () => {
  // A 50% coupon: the product paid 500 of 1000; seats 0 -> 2 at hour 1 (399 less 200 discount),
  // 2 -> 0 at hour 2 (a credit of 399 that takes back its 200 discount). What remains paid for
  // the last 717 of 720 hours is the product's 500 x 717/720 (the seats net to 0 from hour 2 on).
  const lines = [
    line('charge', 'baseline', 1000, 0),
    line('adjustment', 'coupon', -500, 0),
    line('charge', 'quantity_based_component', 399, 1),
    line('adjustment', 'coupon', -200, 1),
    line('credit', 'quantity_based_component', -399, 2),
    line('adjustment', 'coupon', 200, 2),
  ];

  it('takes back the discount a coupon gave on a credited component, as paid, not at list price', () => {
    expect(unpaidRemainder(lines, END, at(3))).toBe(Math.round((500 * 717) / 720));
  });

  it('owes back all of what was paid for the period at its start, and nothing at its end', () => {
    expect(unpaidRemainder(lines.slice(0, 2), END, at(0))).toBe(500);
    expect(unpaidRemainder(lines, END, END)).toBe(0);
  });

  it('never discounts a prorated adjustment again: it is already net of the coupon', () => {
    // A migration at hour 3: a prorated credit of what remained (net), the new product at list
    // price and its coupon. From hour 3 on, the period has paid the new product's half: 1245.
    const migrated = [
      ...lines,
      line('adjustment', 'prorated', -498, 3),
      line('charge', 'baseline', 2490, 3),
      line('adjustment', 'coupon', -1245, 3),
    ];
    expect(unpaidRemainder(migrated, END, at(3))).toBe(1245);
  });
});
