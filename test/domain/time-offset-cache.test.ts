import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatInstant, zoneOffsetAt } from '../../src/domain/time/index.js';

/**
 * The offset as `Intl` shows it, computed here independently of the time core: the zone's wall
 * clock at the instant read as UTC, minus the instant. `zoneOffsetAt` remembers offsets per hour
 * and skips the lookup for UTC; these cases check that it never answers differently from `Intl`.
 */
const formats = new Map<string, Intl.DateTimeFormat>();

function intlOffset(instantMs: number, zone: string): number {
  const format =
    formats.get(zone) ??
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  formats.set(zone, format);
  const fields: Record<string, string> = {};
  for (const part of format.formatToParts(instantMs)) fields[part.type] = part.value;
  const year = fields.era === 'BC' || fields.era === 'B' ? 1 - Number(fields.year) : Number(fields.year);
  const wall = new Date(0);
  wall.setUTCFullYear(year, Number(fields.month) - 1, Number(fields.day));
  wall.setUTCHours(
    Number(fields.hour),
    Number(fields.minute),
    Number(fields.second),
    ((instantMs % 1000) + 1000) % 1000,
  );
  return wall.getTime() - instantMs;
}

const ZONES = [
  'America/New_York',
  'Europe/Berlin',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'Pacific/Chatham',
  'America/Sao_Paulo',
  'America/St_Johns',
  'Europe/Dublin',
  'Africa/Casablanca',
  'Asia/Kathmandu',
] as const;

const HOUR = 3_600_000;

describe('zoneOffsetAt (remembered per hour)', () => {
  it('agrees with Intl at every transition of 2018-2026, at the edges and inside the hours around it', () => {
    const DAY = 24 * HOUR;
    for (const zone of ZONES) {
      for (let day = Date.UTC(2018, 0, 1); day < Date.UTC(2026, 11, 31); day += DAY) {
        if (intlOffset(day, zone) === intlOffset(day + DAY, zone)) continue;
        // A transition in this day: find its first millisecond, then probe the hours around it,
        // twice (the second pass reads what the first one remembered).
        let before = day;
        let after = day + DAY;
        while (after - before > 1) {
          const middle = Math.floor((before + after) / 2);
          if (intlOffset(middle, zone) === intlOffset(day, zone)) before = middle;
          else after = middle;
        }
        for (let pass = 0; pass < 2; pass++) {
          for (const probe of [after, after - 1, after + 1])
            expect(zoneOffsetAt(probe, zone)).toBe(intlOffset(probe, zone));
          for (let at = after - 2 * HOUR; at <= after + 2 * HOUR; at += 7 * 60_000 + 1_001) {
            expect(zoneOffsetAt(at, zone)).toBe(intlOffset(at, zone));
          }
        }
      }
    }
  });

  it('agrees with Intl at random instants over four centuries, read twice', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES, 'UTC', 'Etc/UTC', 'GMT', 'Etc/GMT+5', 'Europe/London'),
        fc.integer({ min: Date.UTC(1800, 0, 1), max: Date.UTC(2200, 0, 1) }),
        (zone, ms) => {
          const expected = intlOffset(ms, zone);
          expect(zoneOffsetAt(ms, zone)).toBe(expected);
          expect(zoneOffsetAt(ms, zone)).toBe(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('answers zero for UTC under any of its names, and still refuses a non-instant', () => {
    for (const zone of ['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT', 'Zulu', 'Etc/Universal']) {
      expect(zoneOffsetAt(Date.UTC(2026, 2, 29, 1), zone)).toBe(0);
      expect(formatInstant(new Date('2026-03-29T01:30:00Z'), zone)).toBe('2026-03-29T01:30:00+00:00');
    }
    expect(() => zoneOffsetAt(Number.NaN, 'UTC')).toThrow(RangeError);
    expect(() => zoneOffsetAt(Number.NaN, 'Europe/Berlin')).toThrow(RangeError);
  });

  it('formats instants in any year a Date can hold as the calendar fields say', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.6e15, max: 8.6e15 }), (ms) => {
        const date = new Date(ms);
        const year = date.getUTCFullYear();
        const yearText =
          year >= 0 && year <= 9999
            ? String(year).padStart(4, '0')
            : (year < 0 ? '-' : '+') + String(Math.abs(year)).padStart(6, '0');
        const two = (n: number) => String(n).padStart(2, '0');
        const expected =
          `${yearText}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}T` +
          `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}+00:00`;
        expect(formatInstant(date, 'UTC')).toBe(expected);
      }),
      { numRuns: 5000 },
    );
  });
});
