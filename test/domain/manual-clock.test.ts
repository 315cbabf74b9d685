import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';

describe('ManualClock', () => {
  it('advances by each unit it knows, and by milliseconds', () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    clock.advance({ days: 1, hours: 2, minutes: 3, seconds: 4, ms: 5 });
    expect(clock.now().toISOString()).toBe('2026-03-02T02:03:04.005Z');
    clock.advance(995);
    expect(clock.now().toISOString()).toBe('2026-03-02T02:03:05.000Z');
  });

  it('refuses a unit it does not know instead of not moving', () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const months = { months: 1 } as unknown as { days: number };
    expect(() => clock.advance(months)).toThrow(/unknown unit "months"/);
    expect(() => clock.advance({ day: 1 } as unknown as { days: number })).toThrow(/unknown unit "day"/);
    expect(clock.now().toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });

  it('refuses a negative or non-finite duration', () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance({ days: Number.NaN })).toThrow(RangeError);
  });
});
