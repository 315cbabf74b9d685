import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addInterval,
  billingPeriod,
  daysInMonth,
  endOfLocalDay,
  firstSnapPeriodEnd,
  formatInstant,
  formatWebhookTimestamp,
  fromWallClock,
  type Interval,
  localDateString,
  parseInstant,
  parseLocalDate,
  periodBoundary,
  periodIndexAt,
  type SnapDay,
  snapBoundary,
  startOfLocalDay,
  stickyNextBoundary,
  toWallClock,
} from '../../src/domain/time/index.js';

const ZONES = [
  'UTC',
  'America/New_York',
  'Europe/Berlin',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'Pacific/Chatham',
  'America/Sao_Paulo',
] as const;

const zoneArb = fc.constantFrom(...ZONES);

const uniformInstantArb = fc.date({
  min: new Date('1990-01-01T00:00:00.000Z'),
  max: new Date('2090-12-31T23:59:59.999Z'),
  noInvalidDate: true,
});

/**
 * Instants at local times where things go wrong: month ends and the hours around midnight and
 * 02:00-03:00, where DST transitions put their gaps and overlaps. The optional shift of 30 or 60
 * minutes reaches the second occurrence of a repeated local time (conversion picks the first).
 */
const edgeInstantArb = (zone: string) =>
  fc
    .record({
      shift: fc.constantFrom(0, 0, 1_800_000, 3_600_000),
      year: fc.integer({ min: 1990, max: 2090 }),
      month: fc.integer({ min: 1, max: 12 }),
      day: fc.oneof(fc.integer({ min: 1, max: 31 }), fc.constantFrom(28, 29, 30, 31)),
      hour: fc.oneof(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 1, 2, 3, 23)),
      minute: fc.constantFrom(0, 15, 30, 45, 59),
      second: fc.integer({ min: 0, max: 59 }),
      millisecond: fc.integer({ min: 0, max: 999 }),
    })
    .map(({ shift, ...wall }) => {
      const day = Math.min(wall.day, daysInMonth(wall.year, wall.month));
      return new Date(fromWallClock({ ...wall, day }, zone).getTime() + shift);
    });

const zonedInstantArb = zoneArb.chain((zone) =>
  fc.tuple(fc.constant(zone), fc.oneof(uniformInstantArb, edgeInstantArb(zone))),
);

const monthIntervalArb: fc.Arbitrary<Interval> = fc
  .integer({ min: 1, max: 12 })
  .map((count) => ({ count, unit: 'month' as const }));
const dayIntervalArb: fc.Arbitrary<Interval> = fc
  .integer({ min: 1, max: 90 })
  .map((count) => ({ count, unit: 'day' as const }));
const intervalArb = fc.oneof(monthIntervalArb, dayIntervalArb);

const addMonths = (year: number, month: number, months: number) => {
  const total = year * 12 + (month - 1) + months;
  return { year: Math.floor(total / 12), month: (((total % 12) + 12) % 12) + 1 };
};

describe('billing period properties', () => {
  it('periods are contiguous, non-empty and strictly increasing', () => {
    fc.assert(
      fc.property(zonedInstantArb, intervalArb, fc.integer({ min: 0, max: 130 }), ([zone, anchor], interval, last) => {
        const bounds = Array.from({ length: last + 2 }, (_, n) => periodBoundary(anchor, n, interval, zone).getTime());
        expect(bounds[0]).toBe(anchor.getTime());
        for (let n = 0; n <= last; n++) {
          expect(bounds[n + 1]).toBeGreaterThan(bounds[n] as number);
        }
        const period = billingPeriod(anchor, last, interval, zone);
        const next = billingPeriod(anchor, last + 1, interval, zone);
        expect(period.start.getTime()).toBe(bounds[last]);
        expect(period.end.getTime()).toBe(bounds[last + 1]);
        expect(next.start).toEqual(period.end);
        expect(period.end.getTime()).toBeGreaterThan(period.start.getTime());
      }),
    );
  });

  it('month boundaries never drift: local day = min(anchor day, days in month) for 10 years', () => {
    fc.assert(
      fc.property(zonedInstantArb, monthIntervalArb, ([zone, anchor], interval) => {
        const start = toWallClock(anchor, zone);
        for (let n = 0; n * interval.count <= 120; n++) {
          const local = toWallClock(periodBoundary(anchor, n, interval, zone), zone);
          const target = addMonths(start.year, start.month, n * interval.count);
          expect({ year: local.year, month: local.month, day: local.day }).toEqual({
            ...target,
            day: Math.min(start.day, daysInMonth(target.year, target.month)),
          });
        }
      }),
    );
  });

  it('day boundaries land on the anchor date + n x count local days', () => {
    fc.assert(
      fc.property(
        zonedInstantArb,
        dayIntervalArb,
        fc.integer({ min: -20, max: 130 }),
        ([zone, anchor], interval, n) => {
          const start = toWallClock(anchor, zone);
          const expected = new Date(Date.UTC(start.year, start.month - 1, start.day + n * interval.count));
          expect(localDateString(periodBoundary(anchor, n, interval, zone), zone)).toBe(
            expected.toISOString().slice(0, 10),
          );
        },
      ),
    );
  });

  it('keeps the local time of day unless that time does not exist on the target day', () => {
    fc.assert(
      fc.property(zonedInstantArb, intervalArb, fc.integer({ min: 0, max: 130 }), ([zone, anchor], interval, n) => {
        const start = toWallClock(anchor, zone);
        const local = toWallClock(periodBoundary(anchor, n, interval, zone), zone);
        const sameTime =
          local.hour === start.hour &&
          local.minute === start.minute &&
          local.second === start.second &&
          local.millisecond === start.millisecond;
        if (!sameTime) {
          // Only a DST gap may move it: then no instant of that day shows the anchor's time, and
          // the boundary is later on the same day by less than the gap (at most an hour here).
          const wanted = { ...local, hour: start.hour, minute: start.minute, second: start.second };
          const converted = toWallClock(fromWallClock({ ...wanted, millisecond: start.millisecond }, zone), zone);
          expect(converted).not.toEqual({ ...wanted, millisecond: start.millisecond });
          const shift =
            (local.hour - start.hour) * 3_600_000 +
            (local.minute - start.minute) * 60_000 +
            (local.second - start.second) * 1000 +
            (local.millisecond - start.millisecond);
          expect(shift).toBeGreaterThan(0);
          expect(shift).toBeLessThanOrEqual(3_600_000);
        }
      }),
    );
  });

  it('periodIndexAt returns n for every instant of period n: start, end - 1 ms and inside', () => {
    fc.assert(
      fc.property(
        zonedInstantArb,
        intervalArb,
        fc.integer({ min: -20, max: 130 }),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        ([zone, anchor], interval, n, fraction) => {
          const { start, end } = billingPeriod(anchor, n, interval, zone);
          const inside = start.getTime() + Math.floor(fraction * (end.getTime() - start.getTime()));
          for (const x of [start.getTime(), end.getTime() - 1, inside]) {
            expect(periodIndexAt(anchor, new Date(x), interval, zone)).toBe(n);
          }
          expect(periodIndexAt(anchor, end, interval, zone)).toBe(n + 1);
        },
      ),
    );
  });

  it("the sticky chain falls on the anchor rule's dates while the anchor day is at most 28, and its day never grows", () => {
    fc.assert(
      fc.property(zonedInstantArb, monthIntervalArb, ([zone, anchor], interval) => {
        const anchorDay = toWallClock(anchor, zone).day;
        let previous = anchor;
        let previousDay = anchorDay;
        for (let n = 1; n <= 24; n++) {
          previous = stickyNextBoundary(previous, interval, zone);
          const day = toWallClock(previous, zone).day;
          expect(day).toBeLessThanOrEqual(previousDay);
          previousDay = day;
          // Dates only: a chain step through a DST gap keeps the moved time (02:30 -> 03:30) from then on.
          if (anchorDay <= 28) {
            expect(localDateString(previous, zone)).toBe(
              localDateString(periodBoundary(anchor, n, interval, zone), zone),
            );
          }
        }
      }),
    );
  });
});

describe('calendar billing properties', () => {
  const snapDayArb: fc.Arbitrary<SnapDay> = fc.oneof(fc.integer({ min: 1, max: 28 }), fc.constant('end' as const));

  it('the snap boundary is the first 12:00 on the snap day strictly after the instant', () => {
    fc.assert(
      fc.property(zonedInstantArb, snapDayArb, ([zone, after], snapDay) => {
        const snap = snapBoundary(after, snapDay, zone);
        expect(snap.getTime()).toBeGreaterThan(after.getTime());
        const local = toWallClock(snap, zone);
        expect([local.hour, local.minute, local.second, local.millisecond]).toEqual([12, 0, 0, 0]);
        expect(local.day).toBe(snapDay === 'end' ? daysInMonth(local.year, local.month) : snapDay);
        // No snap lies in between: the one a month earlier is not after `after`.
        const before = addMonths(local.year, local.month, -1);
        const previousDay = snapDay === 'end' ? daysInMonth(before.year, before.month) : snapDay;
        const previous = fromWallClock(
          { ...before, day: previousDay, hour: 12, minute: 0, second: 0, millisecond: 0 },
          zone,
        );
        expect(previous.getTime()).toBeLessThanOrEqual(after.getTime());
      }),
    );
  });

  it('the first period ends on the next snap unless it is within 24 h, then on the one after', () => {
    fc.assert(
      fc.property(zonedInstantArb, snapDayArb, ([zone, signup], snapDay) => {
        const next = snapBoundary(signup, snapDay, zone);
        const end = firstSnapPeriodEnd(signup, snapDay, zone);
        const withinADay = next.getTime() - signup.getTime() <= 86_400_000;
        expect(end).toEqual(withinADay ? snapBoundary(next, snapDay, zone) : next);
        expect(end.getTime() - signup.getTime()).toBeGreaterThan(86_400_000);
      }),
    );
  });
});

describe('local day and wire format properties', () => {
  it('parseInstant(formatInstant(x)) is x truncated to the second, also from the webhook format', () => {
    fc.assert(
      fc.property(zonedInstantArb, ([zone, instant]) => {
        const truncated = new Date(instant.getTime() - (instant.getTime() % 1000));
        expect(parseInstant(formatInstant(instant, zone), zone)).toEqual(truncated);
        expect(parseInstant(formatWebhookTimestamp(instant, zone), zone)).toEqual(truncated);
        expect(formatInstant(instant, zone)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
      }),
    );
  });

  it('the local day contains the instant, has one date, and the next day starts 1 ms after it ends', () => {
    fc.assert(
      fc.property(zonedInstantArb, ([zone, instant]) => {
        const start = startOfLocalDay(instant, zone);
        const end = endOfLocalDay(instant, zone);
        const date = localDateString(instant, zone);
        expect(start.getTime()).toBeLessThanOrEqual(instant.getTime());
        expect(end.getTime()).toBeGreaterThanOrEqual(instant.getTime());
        expect(localDateString(start, zone)).toBe(date);
        expect(localDateString(end, zone)).toBe(date);
        expect(localDateString(new Date(start.getTime() - 1), zone)).not.toBe(date);
        expect(localDateString(new Date(end.getTime() + 1), zone)).not.toBe(date);
        expect(parseLocalDate(date, zone)).toEqual(start);
        expect(parseInstant(date, zone)).toEqual(start);
      }),
    );
  });

  it('a wall clock read from an instant converts back to that instant, or to its first occurrence', () => {
    fc.assert(
      fc.property(zonedInstantArb, ([zone, instant]) => {
        const wall = toWallClock(instant, zone);
        const back = fromWallClock(wall, zone);
        expect(toWallClock(back, zone)).toEqual(wall);
        expect(back.getTime()).toBeLessThanOrEqual(instant.getTime());
        // Only an overlap (at most an hour here) can map it to an earlier occurrence.
        expect(instant.getTime() - back.getTime()).toBeLessThanOrEqual(3_600_000);
      }),
    );
  });

  it('addInterval by n then by -n returns to the same local date for day intervals', () => {
    fc.assert(
      fc.property(zonedInstantArb, dayIntervalArb, fc.integer({ min: -130, max: 130 }), ([zone, x], interval, n) => {
        const there = addInterval(x, interval, n, zone);
        expect(localDateString(addInterval(there, interval, -n, zone), zone)).toBe(localDateString(x, zone));
      }),
    );
  });
});
