import { afterEach, describe, expect, it } from 'vitest';
import {
  addInterval,
  assertInterval,
  assertSnapDay,
  assertTimeZone,
  billingPeriod,
  daysInMonth,
  endOfLocalDay,
  firstSnapPeriodEnd,
  formatInstant,
  formatWebhookTimestamp,
  fromWallClock,
  type Interval,
  isValidTimeZone,
  localDateString,
  millisecondsBetween,
  parseInstant,
  parseLocalDate,
  periodBoundary,
  periodIndexAt,
  type SnapDay,
  secondsBetween,
  snapBoundary,
  startOfLocalDay,
  stickyNextBoundary,
  toWallClock,
} from '../../src/domain/time/index.js';
import { BillingError } from '../../src/errors.js';

const NY = 'America/New_York';
const BERLIN = 'Europe/Berlin';
const SAO_PAULO = 'America/Sao_Paulo';
const HOUR = 3_600_000;

const months = (count: number): Interval => ({ count, unit: 'month' });
const days = (count: number): Interval => ({ count, unit: 'day' });
/** An instant from a local date-time (or an ISO string with offset) in `zone`. */
const at = (text: string, zone: string): Date => parseInstant(text, zone);
const iso = (text: string): Date => new Date(text);

/** Runs `fn` and returns the BillingError it throws; fails the test if it throws nothing. */
function caught(fn: () => unknown): BillingError {
  try {
    fn();
  } catch (error) {
    if (error instanceof BillingError) return error;
    throw error;
  }
  throw new Error('expected a BillingError, nothing was thrown');
}

function expectValidation(fn: () => unknown, message: string, attribute?: string): void {
  const error = caught(fn);
  expect(error.code).toBe('validation');
  expect(error.message).toBe(message);
  expect(error.details).toEqual([attribute === undefined ? { message } : { message, attribute }]);
}

function boundaries(anchor: Date, interval: Interval, zone: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) =>
    formatInstant(periodBoundary(anchor, index, interval, zone), zone),
  );
}

function stickyChain(start: Date, interval: Interval, zone: string, count: number): Date[] {
  const ends: Date[] = [];
  let previous = start;
  for (let i = 0; i < count; i++) {
    previous = stickyNextBoundary(previous, interval, zone);
    ends.push(previous);
  }
  return ends;
}

describe('time zones', () => {
  it.each(['UTC', 'Etc/UTC', NY, BERLIN, 'Asia/Kolkata', 'Pacific/Chatham'])('accepts %s', (zone) => {
    expect(isValidTimeZone(zone)).toBe(true);
    expect(() => assertTimeZone(zone)).not.toThrow();
  });

  it.each<[unknown]>([['Mars/Base'], [''], ['+05:00'], ['UTC '], [42], [undefined], [null]])('rejects %j', (zone) => {
    expect(isValidTimeZone(zone)).toBe(false);
  });

  it('reports an unknown zone in the service style with the time_zone attribute', () => {
    expectValidation(
      () => assertTimeZone('Mars/Base'),
      "Time zone: 'Mars/Base' is not a valid IANA time zone.",
      'time_zone',
    );
    expectValidation(() => assertTimeZone(42), "Time zone: '42' is not a valid IANA time zone.", 'time_zone');
  });

  it('answers the same the second time (valid names are cached)', () => {
    expect(isValidTimeZone('Mars/Base')).toBe(false);
    expect(isValidTimeZone('Mars/Base')).toBe(false);
    expect(isValidTimeZone(NY)).toBe(true);
    expect(isValidTimeZone(NY)).toBe(true);
  });

  const anchor = iso('2026-01-01T00:00:00Z');
  it.each<[string, () => unknown]>([
    ['periodBoundary', () => periodBoundary(anchor, 1, months(1), 'Mars/Base')],
    ['billingPeriod', () => billingPeriod(anchor, 1, months(1), 'Mars/Base')],
    ['periodIndexAt', () => periodIndexAt(anchor, anchor, months(1), 'Mars/Base')],
    ['addInterval', () => addInterval(anchor, months(1), 1, 'Mars/Base')],
    ['stickyNextBoundary', () => stickyNextBoundary(anchor, months(1), 'Mars/Base')],
    ['snapBoundary', () => snapBoundary(anchor, 1, 'Mars/Base')],
    ['firstSnapPeriodEnd', () => firstSnapPeriodEnd(anchor, 1, 'Mars/Base')],
    ['startOfLocalDay', () => startOfLocalDay(anchor, 'Mars/Base')],
    ['endOfLocalDay', () => endOfLocalDay(anchor, 'Mars/Base')],
    ['localDateString', () => localDateString(anchor, 'Mars/Base')],
    ['parseLocalDate', () => parseLocalDate('2026-01-01', 'Mars/Base')],
    ['formatInstant', () => formatInstant(anchor, 'Mars/Base')],
    ['formatWebhookTimestamp', () => formatWebhookTimestamp(anchor, 'Mars/Base')],
    ['parseInstant', () => parseInstant('2026-01-01', 'Mars/Base')],
    ['toWallClock', () => toWallClock(anchor, 'Mars/Base')],
  ])('%s refuses an unknown zone', (_name, call) => {
    expectValidation(call, "Time zone: 'Mars/Base' is not a valid IANA time zone.", 'time_zone');
  });
});

describe('intervals', () => {
  it('accepts positive whole counts of days and months', () => {
    expect(() => assertInterval(months(1))).not.toThrow();
    expect(() => assertInterval(months(12))).not.toThrow();
    expect(() => assertInterval(days(90))).not.toThrow();
  });

  it.each<[unknown]>([
    [{ count: 0, unit: 'month' }],
    [{ count: -1, unit: 'day' }],
    [{ count: 1.5, unit: 'month' }],
    [{ count: Number.NaN, unit: 'month' }],
    [{ count: Number.POSITIVE_INFINITY, unit: 'month' }],
    [{ count: Number.MAX_SAFE_INTEGER + 1, unit: 'month' }],
    [{ count: '1', unit: 'month' }],
    [{ unit: 'month' }],
    [null],
  ])('rejects the count of %j', (interval) => {
    expectValidation(() => assertInterval(interval), 'Interval: must be greater than 0.', 'interval');
  });

  it.each<[unknown]>([['week'], ['year'], ['Month'], [undefined]])('rejects the unit %j', (unit) => {
    expectValidation(
      () => assertInterval({ count: 1, unit }),
      "Interval unit: must be 'day' or 'month'.",
      'interval_unit',
    );
  });

  it('is checked by the period helpers', () => {
    expectValidation(
      () => periodBoundary(iso('2026-01-01T00:00:00Z'), 1, { count: 0, unit: 'month' }, 'UTC'),
      'Interval: must be greater than 0.',
      'interval',
    );
  });
});

describe('anchor rule (default): boundary n = anchor + n x interval on the local wall clock', () => {
  it('renews a Jan 31 anchor on each month end without drifting (2023)', () => {
    const anchor = at('2023-01-31T09:00:00', NY);
    expect(boundaries(anchor, months(1), NY, 13)).toEqual([
      '2023-01-31T09:00:00-05:00',
      '2023-02-28T09:00:00-05:00',
      '2023-03-31T09:00:00-04:00',
      '2023-04-30T09:00:00-04:00',
      '2023-05-31T09:00:00-04:00',
      '2023-06-30T09:00:00-04:00',
      '2023-07-31T09:00:00-04:00',
      '2023-08-31T09:00:00-04:00',
      '2023-09-30T09:00:00-04:00',
      '2023-10-31T09:00:00-04:00',
      '2023-11-30T09:00:00-05:00',
      '2023-12-31T09:00:00-05:00',
      '2024-01-31T09:00:00-05:00',
    ]);
  });

  it('renews a Jan 31 anchor on Feb 29 in the leap year 2024 and on Feb 28 after it', () => {
    const anchor = at('2024-01-31T09:00:00', NY);
    expect(boundaries(anchor, months(1), NY, 4)).toEqual([
      '2024-01-31T09:00:00-05:00',
      '2024-02-29T09:00:00-05:00',
      '2024-03-31T09:00:00-04:00',
      '2024-04-30T09:00:00-04:00',
    ]);
    expect(localDateString(periodBoundary(anchor, 13, months(1), NY), NY)).toBe('2025-02-28');
    expect(localDateString(periodBoundary(anchor, 49, months(1), NY), NY)).toBe('2028-02-29');
  });

  it('B5: 2023-01-31 monthly gives 2023-02-28, 2023-03-31, 2023-04-30 (not the sticky 28th)', () => {
    const anchor = at('2023-01-31', 'UTC');
    const ends = [1, 2, 3].map((n) => localDateString(periodBoundary(anchor, n, months(1), 'UTC'), 'UTC'));
    expect(ends).toEqual(['2023-02-28', '2023-03-31', '2023-04-30']);
  });

  it('B6: 10 monthly charges from 2023-01-01; the 10-month expiration lands on the 11th boundary', () => {
    const signup = at('2023-01-01T08:00:00', NY);
    const expiresAt = addInterval(signup, months(10), 1, NY);
    expect(formatInstant(expiresAt, NY)).toBe('2023-11-01T08:00:00-04:00');
    const charges = Array.from({ length: 10 }, (_, n) => localDateString(periodBoundary(signup, n, months(1), NY), NY));
    expect(charges).toEqual([
      '2023-01-01',
      '2023-02-01',
      '2023-03-01',
      '2023-04-01',
      '2023-05-01',
      '2023-06-01',
      '2023-07-01',
      '2023-08-01',
      '2023-09-01',
      '2023-10-01',
    ]);
    expect(periodBoundary(signup, 10, months(1), NY)).toEqual(expiresAt);
  });

  it('keeps 09:00 local for daily periods across both New York DST changes (23 h and 25 h days)', () => {
    const spring = at('2024-03-08T09:00:00', NY);
    expect(boundaries(spring, days(1), NY, 4)).toEqual([
      '2024-03-08T09:00:00-05:00',
      '2024-03-09T09:00:00-05:00',
      '2024-03-10T09:00:00-04:00',
      '2024-03-11T09:00:00-04:00',
    ]);
    const short = billingPeriod(spring, 1, days(1), NY);
    expect(millisecondsBetween(short.start, short.end)).toBe(23 * HOUR);

    const autumn = at('2024-11-02T09:00:00', NY);
    expect(periodBoundary(autumn, 1, days(1), NY)).toEqual(iso('2024-11-03T14:00:00Z'));
    const long = billingPeriod(autumn, 0, days(1), NY);
    expect(millisecondsBetween(long.start, long.end)).toBe(25 * HOUR);
  });

  it('keeps 09:00 local for daily periods across both Berlin DST changes', () => {
    const spring = at('2024-03-30T09:00:00', BERLIN);
    expect(periodBoundary(spring, 0, days(1), BERLIN)).toEqual(iso('2024-03-30T08:00:00Z'));
    expect(periodBoundary(spring, 1, days(1), BERLIN)).toEqual(iso('2024-03-31T07:00:00Z'));
    expect(formatInstant(periodBoundary(spring, 1, days(1), BERLIN), BERLIN)).toBe('2024-03-31T09:00:00+02:00');
    const autumn = at('2024-10-26T09:00:00', BERLIN);
    expect(periodBoundary(autumn, 1, days(1), BERLIN)).toEqual(iso('2024-10-27T08:00:00Z'));
    expect(formatInstant(periodBoundary(autumn, 1, days(1), BERLIN), BERLIN)).toBe('2024-10-27T09:00:00+01:00');
  });

  it('keeps the local time for monthly periods across DST (the UTC hour moves instead)', () => {
    const anchor = at('2024-01-15T09:00:00', NY);
    expect(periodBoundary(anchor, 2, months(1), NY)).toEqual(iso('2024-03-15T13:00:00Z'));
    expect(periodBoundary(anchor, 10, months(1), NY)).toEqual(iso('2024-11-15T14:00:00Z'));
    const berlin = at('2024-02-29T18:30:00', BERLIN);
    expect(boundaries(berlin, months(1), BERLIN, 3)).toEqual([
      '2024-02-29T18:30:00+01:00',
      '2024-03-29T18:30:00+01:00',
      '2024-04-29T18:30:00+02:00',
    ]);
  });

  it('pins the DST gap: 02:30 on 2024-03-10 in New York does not exist and becomes 03:30 EDT', () => {
    // Monthly from Feb 10 02:30: the March boundary moves forward by the gap, April is back at 02:30.
    const monthly = at('2024-02-10T02:30:00', NY);
    expect(periodBoundary(monthly, 1, months(1), NY)).toEqual(iso('2024-03-10T07:30:00Z'));
    expect(formatInstant(periodBoundary(monthly, 1, months(1), NY), NY)).toBe('2024-03-10T03:30:00-04:00');
    expect(formatInstant(periodBoundary(monthly, 2, months(1), NY), NY)).toBe('2024-04-10T02:30:00-04:00');
    // Daily from Mar 9 02:30 EST.
    const daily = at('2024-03-09T02:30:00', NY);
    expect(boundaries(daily, days(1), NY, 3)).toEqual([
      '2024-03-09T02:30:00-05:00',
      '2024-03-10T03:30:00-04:00',
      '2024-03-11T02:30:00-04:00',
    ]);
    // The same rule for a bare local time.
    expect(at('2024-03-10T02:30:00', NY)).toEqual(iso('2024-03-10T07:30:00Z'));
  });

  it('keeps the local date when a DST gap swallows midnight (São Paulo, 2018-11-04 00:00-01:00)', () => {
    const daily = at('2018-11-03T00:30:00', SAO_PAULO);
    const next = periodBoundary(daily, 1, days(1), SAO_PAULO);
    expect(formatInstant(next, SAO_PAULO)).toBe('2018-11-04T01:30:00-02:00');
    expect(localDateString(next, SAO_PAULO)).toBe('2018-11-04');
  });

  it('pins the DST overlap: 01:30 on 2024-11-03 in New York happens twice and the first (EDT) is taken', () => {
    const daily = at('2024-11-02T01:30:00', NY);
    expect(periodBoundary(daily, 1, days(1), NY)).toEqual(iso('2024-11-03T05:30:00Z'));
    expect(boundaries(daily, days(1), NY, 3)).toEqual([
      '2024-11-02T01:30:00-04:00',
      '2024-11-03T01:30:00-04:00',
      '2024-11-04T01:30:00-05:00',
    ]);
    expect(at('2024-11-03T01:30:00', NY)).toEqual(iso('2024-11-03T05:30:00Z'));
    // Lord Howe falls back half an hour (02:00 +11:00 to 01:30 +10:30): 01:45 is taken at +11:00.
    expect(formatInstant(at('2024-04-07T01:45:00', 'Australia/Lord_Howe'), 'Australia/Lord_Howe')).toBe(
      '2024-04-07T01:45:00+11:00',
    );
  });

  it('keeps an anchor at the second occurrence of a repeated local time as boundary 0', () => {
    const second = iso('2024-11-03T06:30:00Z'); // 01:30 EST, after 01:30 EDT
    expect(periodBoundary(second, 0, days(1), NY)).toEqual(second);
    expect(billingPeriod(second, 0, days(1), NY).start).toEqual(second);
    expect(billingPeriod(second, -1, days(1), NY).end).toEqual(second);
    expect(periodIndexAt(second, second, days(1), NY)).toBe(0);
    expect(addInterval(second, months(1), 0, NY)).toEqual(second);
    expect(formatInstant(periodBoundary(second, 1, days(1), NY), NY)).toBe('2024-11-04T01:30:00-05:00');
  });

  it('builds half-open periods that share their boundaries, also before the anchor', () => {
    const anchor = at('2023-01-31T09:00:00', NY);
    const first = billingPeriod(anchor, 0, months(1), NY);
    const second = billingPeriod(anchor, 1, months(1), NY);
    expect(first.end).toEqual(second.start);
    expect(formatInstant(first.start, NY)).toBe('2023-01-31T09:00:00-05:00');
    expect(formatInstant(second.end, NY)).toBe('2023-03-31T09:00:00-04:00');
    const before = billingPeriod(anchor, -1, months(1), NY);
    expect(formatInstant(before.start, NY)).toBe('2022-12-31T09:00:00-05:00');
    expect(before.end).toEqual(anchor);
  });

  it('finds the period index of an instant, boundaries included in the later period', () => {
    const anchor = at('2023-01-31T09:00:00', NY);
    const feb28 = at('2023-02-28T09:00:00', NY);
    expect(periodIndexAt(anchor, anchor, months(1), NY)).toBe(0);
    expect(periodIndexAt(anchor, new Date(anchor.getTime() - 1), months(1), NY)).toBe(-1);
    expect(periodIndexAt(anchor, feb28, months(1), NY)).toBe(1);
    expect(periodIndexAt(anchor, new Date(feb28.getTime() - 1), months(1), NY)).toBe(0);
    // Mar 30 is on a day before the anchor's 31st but still in period 1 (Feb 28 - Mar 31).
    expect(periodIndexAt(anchor, at('2023-03-30T23:00:00', NY), months(1), NY)).toBe(1);
    expect(periodIndexAt(anchor, at('2022-11-30T09:00:00', NY), months(1), NY)).toBe(-2);
    expect(periodIndexAt(anchor, at('2022-11-30T08:59:59', NY), months(1), NY)).toBe(-3);
  });

  it('finds far-away periods directly (a century of monthly periods, 80 years of 3-day periods)', () => {
    const anchor = at('2023-01-31T09:00:00', NY);
    const far = iso('2123-01-01T00:00:00Z');
    const n = periodIndexAt(anchor, far, months(1), NY);
    expect(n).toBe(1199);
    const period = billingPeriod(anchor, n, months(1), NY);
    expect(period.start.getTime()).toBeLessThanOrEqual(far.getTime());
    expect(period.end.getTime()).toBeGreaterThan(far.getTime());

    const threeDays = days(3);
    const later = at('2103-06-01T12:00:00', NY);
    const k = periodIndexAt(anchor, later, threeDays, NY);
    const found = billingPeriod(anchor, k, threeDays, NY);
    expect(found.start.getTime()).toBeLessThanOrEqual(later.getTime());
    expect(found.end.getTime()).toBeGreaterThan(later.getTime());
    expect(k).toBe(Math.floor((Date.UTC(2103, 5, 1) - Date.UTC(2023, 0, 31)) / 86_400_000 / 3));
  });

  it('rejects fractional indexes, invalid anchors and results beyond the Date range', () => {
    const anchor = at('2023-01-31T09:00:00', NY);
    expectValidation(() => periodBoundary(anchor, 1.5, months(1), NY), 'Period index: must be an integer.');
    expectValidation(() => billingPeriod(anchor, Number.NaN, months(1), NY), 'Period index: must be an integer.');
    expectValidation(() => periodBoundary(new Date(Number.NaN), 1, months(1), NY), 'Date: is not a valid date.');
    expectValidation(() => periodIndexAt(anchor, new Date(Number.NaN), months(1), NY), 'Date: is not a valid date.');
    expectValidation(() => periodBoundary(anchor, 4_000_000, months(1), NY), 'Date: is out of range.');
  });
});

describe('sticky rule (parity setting): next end = previous end + interval, day clamped', () => {
  it('B1: 2022-10-31 renews Nov 30, Dec 30, Jan 30, Feb 28, Mar 28, Apr 28', () => {
    const ends = stickyChain(at('2022-10-31T10:15:00', NY), months(1), NY, 6);
    expect(ends.map((end) => localDateString(end, NY))).toEqual([
      '2022-11-30',
      '2022-12-30',
      '2023-01-30',
      '2023-02-28',
      '2023-03-28',
      '2023-04-28',
    ]);
    // The local renewal time survives the March DST change.
    expect(ends.map((end) => formatInstant(end, NY).slice(11, 19))).toEqual(Array(6).fill('10:15:00'));
  });

  it('B2: 2023-01-31 stays on the 28th', () => {
    const ends = stickyChain(at('2023-01-31', 'UTC'), months(1), 'UTC', 5);
    expect(ends.map((end) => localDateString(end, 'UTC'))).toEqual([
      '2023-02-28',
      '2023-03-28',
      '2023-04-28',
      '2023-05-28',
      '2023-06-28',
    ]);
  });

  it('B3: 2024-01-31 (leap year) stays on the 29th', () => {
    const ends = stickyChain(at('2024-01-31', 'UTC'), months(1), 'UTC', 4);
    expect(ends.map((end) => localDateString(end, 'UTC'))).toEqual([
      '2024-02-29',
      '2024-03-29',
      '2024-04-29',
      '2024-05-29',
    ]);
  });

  it('B4: 2024-02-29 yearly renews 2025-02-28, 2026-02-28 and stays on the 28th in 2028', () => {
    const ends = stickyChain(at('2024-02-29', BERLIN), months(12), BERLIN, 4);
    expect(ends.map((end) => localDateString(end, BERLIN))).toEqual([
      '2025-02-28',
      '2026-02-28',
      '2027-02-28',
      '2028-02-28',
    ]);
  });

  it('adds local days for day intervals, across DST', () => {
    expect(formatInstant(stickyNextBoundary(at('2024-03-09T09:00:00', NY), days(1), NY), NY)).toBe(
      '2024-03-10T09:00:00-04:00',
    );
  });
});

describe('calendar billing (snap_day, renewals at 12:00 local)', () => {
  // Reference §9.3: snap day, signup (local), charge kind, current_period_ends_at (local).
  it.each<[SnapDay, string, 'prorated' | 'full', string]>([
    [15, '2025-06-02T15:00:00', 'prorated', '2025-06-15T12:00:00-04:00'],
    [15, '2025-06-14T15:00:00', 'full', '2025-07-15T12:00:00-04:00'],
    [15, '2025-06-15T12:01:00', 'prorated', '2025-07-15T12:00:00-04:00'],
    ['end', '2025-06-02T15:00:00', 'prorated', '2025-06-30T12:00:00-04:00'],
    ['end', '2025-06-29T15:00:00', 'full', '2025-07-31T12:00:00-04:00'],
    ['end', '2025-06-30T12:01:00', 'prorated', '2025-07-31T12:00:00-04:00'],
  ])('snap day %s, signup %s: %s period ending %s', (snapDay, signup, charge, expectedEnd) => {
    const signupAt = at(signup, NY);
    const end = firstSnapPeriodEnd(signupAt, snapDay, NY);
    expect(formatInstant(end, NY)).toBe(expectedEnd);
    // A full period skips the first snap after signup; a prorated one ends on it.
    const skipsFirstSnap = end.getTime() > snapBoundary(signupAt, snapDay, NY).getTime();
    expect(skipsFirstSnap ? 'full' : 'prorated').toBe(charge);
  });

  it('counts exactly 24 h before the snap as within 24 h', () => {
    expect(formatInstant(firstSnapPeriodEnd(at('2025-06-14T12:00:00', NY), 15, NY), NY)).toBe(
      '2025-07-15T12:00:00-04:00',
    );
    expect(formatInstant(firstSnapPeriodEnd(at('2025-06-14T11:59:59.999', NY), 15, NY), NY)).toBe(
      '2025-06-15T12:00:00-04:00',
    );
  });

  it('measures the 24 h in elapsed time across a DST change', () => {
    // The 2024-03-10 snap (12:00 EDT) is 23.5 elapsed hours after 11:30 EST the day before.
    expect(localDateString(firstSnapPeriodEnd(at('2024-03-09T11:30:00', NY), 10, NY), NY)).toBe('2024-04-10');
    // 10:30 EST is 24.5 elapsed hours before: prorated to the coming snap.
    expect(localDateString(firstSnapPeriodEnd(at('2024-03-09T10:30:00', NY), 10, NY), NY)).toBe('2024-03-10');
  });

  it('finds the first snap 12:00 strictly after an instant', () => {
    const snap = at('2025-06-15T12:00:00', NY);
    expect(snapBoundary(new Date(snap.getTime() - 1), 15, NY)).toEqual(snap);
    expect(formatInstant(snapBoundary(snap, 15, NY), NY)).toBe('2025-07-15T12:00:00-04:00');
    expect(formatInstant(snapBoundary(at('2025-06-01T00:00:00', NY), 1, NY), NY)).toBe('2025-06-01T12:00:00-04:00');
    expect(formatInstant(snapBoundary(at('2025-12-31T12:00:00', NY), 'end', NY), NY)).toBe('2026-01-31T12:00:00-05:00');
  });

  it("uses each month's last day for 'end' (Feb 29 in 2024, Feb 28 in 2025)", () => {
    expect(formatInstant(snapBoundary(at('2024-02-01', NY), 'end', NY), NY)).toBe('2024-02-29T12:00:00-05:00');
    expect(formatInstant(snapBoundary(at('2025-02-01', NY), 'end', NY), NY)).toBe('2025-02-28T12:00:00-05:00');
  });

  it.each<[unknown]>([[0], [29], [31], [1.5], ['END'], ['15'], [null]])('rejects the snap day %j', (snapDay) => {
    expectValidation(() => assertSnapDay(snapDay), "Snap day: must be a number between 1 and 28 or 'end'.", 'snap_day');
    expectValidation(
      () => snapBoundary(iso('2025-06-01T00:00:00Z'), snapDay as SnapDay, NY),
      "Snap day: must be a number between 1 and 28 or 'end'.",
      'snap_day',
    );
  });
});

describe('local days', () => {
  it('starts and ends the local day, not the UTC day', () => {
    const lateEvening = iso('2026-01-01T03:00:00Z'); // 2025-12-31 22:00 in New York
    expect(startOfLocalDay(lateEvening, NY)).toEqual(iso('2025-12-31T05:00:00Z'));
    expect(endOfLocalDay(lateEvening, NY)).toEqual(iso('2026-01-01T04:59:59.999Z'));
    expect(localDateString(lateEvening, NY)).toBe('2025-12-31');
    expect(localDateString(lateEvening, 'UTC')).toBe('2026-01-01');
    expect(localDateString(lateEvening, 'Asia/Kolkata')).toBe('2026-01-01');
  });

  it('has 23 and 25 hour days on DST changes', () => {
    const spring = at('2024-03-10T12:00:00', NY);
    expect(startOfLocalDay(spring, NY)).toEqual(iso('2024-03-10T05:00:00Z'));
    expect(endOfLocalDay(spring, NY)).toEqual(iso('2024-03-11T03:59:59.999Z'));
    const autumn = at('2024-11-03T12:00:00', NY);
    expect(millisecondsBetween(startOfLocalDay(autumn, NY), endOfLocalDay(autumn, NY)) + 1).toBe(25 * HOUR);
  });

  it('starts a day whose midnight falls in a DST gap at its first existing time (São Paulo 2018-11-04)', () => {
    const noon = at('2018-11-04T12:00:00', SAO_PAULO);
    expect(formatInstant(startOfLocalDay(noon, SAO_PAULO), SAO_PAULO)).toBe('2018-11-04T01:00:00-02:00');
    expect(formatInstant(parseLocalDate('2018-11-04', SAO_PAULO), SAO_PAULO)).toBe('2018-11-04T01:00:00-02:00');
    // The evening before is a normal day ending at the gap.
    expect(endOfLocalDay(at('2018-11-03T12:00:00', SAO_PAULO), SAO_PAULO)).toEqual(iso('2018-11-04T02:59:59.999Z'));
  });

  it('ends a day whose last hour repeats after the second occurrence (São Paulo 2018-02-17)', () => {
    const day = at('2018-02-17T12:00:00', SAO_PAULO);
    expect(endOfLocalDay(day, SAO_PAULO)).toEqual(iso('2018-02-18T02:59:59.999Z'));
    expect(millisecondsBetween(startOfLocalDay(day, SAO_PAULO), endOfLocalDay(day, SAO_PAULO)) + 1).toBe(25 * HOUR);
  });

  it('parses a local date to the start of that day in the zone', () => {
    expect(parseLocalDate('2024-02-29', NY)).toEqual(iso('2024-02-29T05:00:00Z'));
    expect(parseLocalDate('2024-07-01', NY)).toEqual(iso('2024-07-01T04:00:00Z'));
    expect(parseLocalDate('2024-07-01', 'UTC')).toEqual(iso('2024-07-01T00:00:00Z'));
  });

  it.each<[unknown]>([
    ['2023-02-30'],
    ['2023-2-3'],
    ['2023-13-01'],
    ['2023-00-10'],
    [''],
    ['tomorrow'],
    [20230101],
    [null],
  ])('rejects the local date %j', (text) => {
    expectValidation(() => parseLocalDate(text, NY), 'Date: is not a valid date.');
  });

  it('names the field in its error', () => {
    expectValidation(() => parseLocalDate('2023-02-30', NY, 'Trial end date'), 'Trial end date: is not a valid date.');
  });

  it('converts wall clocks both ways and refuses impossible ones', () => {
    const wall = toWallClock(iso('2024-02-29T17:45:30.250Z'), NY);
    expect(wall).toEqual({ year: 2024, month: 2, day: 29, hour: 12, minute: 45, second: 30, millisecond: 250 });
    expect(fromWallClock(wall, NY)).toEqual(iso('2024-02-29T17:45:30.250Z'));
    expectValidation(
      () => fromWallClock({ ...wall, year: 2023 }, NY), // 2023-02-29
      'Date: is not a valid date.',
    );
    expectValidation(() => fromWallClock({ ...wall, hour: 24 }, NY), 'Date: is not a valid date.');
    expect(daysInMonth(2024, 2)).toBe(29);
    expect(daysInMonth(2100, 2)).toBe(28);
    expect(daysInMonth(2000, 2)).toBe(29);
  });
});

describe('wire formats', () => {
  it("writes ISO 8601 with the zone's offset and no milliseconds", () => {
    expect(formatInstant(iso('2026-01-01T05:00:00Z'), NY)).toBe('2026-01-01T00:00:00-05:00');
    expect(formatInstant(iso('2026-07-01T04:00:00.999Z'), NY)).toBe('2026-07-01T00:00:00-04:00');
    expect(formatInstant(iso('2026-01-01T00:00:00Z'), 'UTC')).toBe('2026-01-01T00:00:00+00:00');
    expect(formatInstant(iso('2026-01-01T00:00:00Z'), 'Etc/UTC')).toBe('2026-01-01T00:00:00+00:00');
    expect(formatInstant(iso('2026-01-01T00:00:00Z'), 'Asia/Kolkata')).toBe('2026-01-01T05:30:00+05:30');
    expect(formatInstant(iso('2026-01-01T00:00:00Z'), 'Pacific/Chatham')).toBe('2026-01-01T13:45:00+13:45');
    expect(formatInstant(iso('2026-01-01T00:00:00Z'), 'America/St_Johns')).toBe('2025-12-31T20:30:00-03:30');
  });

  it('writes webhook timestamps as "YYYY-MM-DD HH:mm:ss -0400"', () => {
    expect(formatWebhookTimestamp(iso('2016-11-04T21:06:43Z'), NY)).toBe('2016-11-04 17:06:43 -0400');
    expect(formatWebhookTimestamp(iso('2016-12-04T21:06:43.500Z'), NY)).toBe('2016-12-04 16:06:43 -0500');
    expect(formatWebhookTimestamp(iso('2016-11-04T21:06:43Z'), 'Asia/Kolkata')).toBe('2016-11-05 02:36:43 +0530');
    expect(formatWebhookTimestamp(iso('2016-11-04T21:06:43Z'), 'UTC')).toBe('2016-11-04 21:06:43 +0000');
  });

  it.each<[string, string, string]>([
    ['2026-12-11T11:30:39Z', NY, '2026-12-11T11:30:39.000Z'],
    ['2026-12-11T11:30:39z', NY, '2026-12-11T11:30:39.000Z'],
    ['2026-12-11T11:30:39-05:00', 'UTC', '2026-12-11T16:30:39.000Z'],
    ['2026-12-11T11:30:39+0530', NY, '2026-12-11T06:00:39.000Z'],
    ['2026-12-11T11:30:39+01', NY, '2026-12-11T10:30:39.000Z'],
    ['2026-12-11T11:30:39.123456Z', NY, '2026-12-11T11:30:39.123Z'],
    ['2026-12-11T11:30:39.5+01:00', NY, '2026-12-11T10:30:39.500Z'],
    ['2026-12-11T11:30:39', NY, '2026-12-11T16:30:39.000Z'],
    ['2026-12-11 11:30:39', NY, '2026-12-11T16:30:39.000Z'],
    ['2026-12-11T11:30:39', 'UTC', '2026-12-11T11:30:39.000Z'],
    ['2026-07-11T11:30:39', NY, '2026-07-11T15:30:39.000Z'],
    ['2026-12-11T11:30', NY, '2026-12-11T16:30:00.000Z'],
    ['2026-12-11', NY, '2026-12-11T05:00:00.000Z'],
    ['2026-12-11', 'Asia/Kolkata', '2026-12-10T18:30:00.000Z'],
    ['  2026-12-11T11:30:39Z ', NY, '2026-12-11T11:30:39.000Z'],
    ['2016-11-04 17:06:43 -0400', 'UTC', '2016-11-04T21:06:43.000Z'],
    ['2024-11-03T01:30:00-05:00', NY, '2024-11-03T06:30:00.000Z'],
  ])('parses %j in %s as %s', (text, zone, expected) => {
    expect(parseInstant(text, zone).toISOString()).toBe(expected);
  });

  it('returns a copy of a valid Date', () => {
    const instant = iso('2026-12-11T11:30:39.123Z');
    const parsed = parseInstant(instant, NY);
    expect(parsed).toEqual(instant);
    expect(parsed).not.toBe(instant);
  });

  it.each<[unknown]>([
    [1765452639],
    ['1765452639'],
    ['tomorrow'],
    ['2026-13-01'],
    ['2026-02-30'],
    ['2026-00-01'],
    [''],
    ['   '],
    [null],
    [undefined],
    [{}],
    [new Date(Number.NaN)],
    ['2026-12-11T24:00:00'],
    ['2026-12-11T11:60:00'],
    ['2026-12-11T11:30:60'],
    ['2026-12-11T24:00:00Z'],
    ['2026-12-11T11:60:00+01:00'],
    ['2026-12-11T11:30:60Z'],
    ['2026-12-11T11:30:39+25:00'],
    ['2026-12-11T11:30:39+05:60'],
    ['2026-12-11Z'],
    ['2026/12/11'],
    ['26-12-11'],
    ['2026-12-11T11'],
    ['2026-12-11T11:30:39 EST'],
  ])('rejects %j', (input) => {
    expectValidation(() => parseInstant(input, NY), 'Date: is not a valid date.');
  });

  it('names the field in its error', () => {
    expectValidation(() => parseInstant('tomorrow', NY, 'Expires at'), 'Expires at: is not a valid date.');
    expectValidation(() => parseInstant('2026-12-11T25:00:00', NY, 'Expires at'), 'Expires at: is not a valid date.');
    expectValidation(() => parseInstant('2026-02-30', NY, 'Expires at'), 'Expires at: is not a valid date.');
  });

  it('reads what it writes, to the second', () => {
    const instant = iso('2024-11-03T06:30:00.750Z'); // the second 01:30 in New York
    expect(formatInstant(instant, NY)).toBe('2024-11-03T01:30:00-05:00');
    expect(parseInstant(formatInstant(instant, NY), NY)).toEqual(iso('2024-11-03T06:30:00Z'));
    expect(parseInstant(formatWebhookTimestamp(instant, NY), NY)).toEqual(iso('2024-11-03T06:30:00Z'));
  });
});

describe('addInterval and elapsed time', () => {
  it('moves forwards and backwards by whole intervals', () => {
    const jan31 = at('2023-01-31T09:00:00', NY);
    expect(formatInstant(addInterval(jan31, months(1), -1, NY), NY)).toBe('2022-12-31T09:00:00-05:00');
    expect(formatInstant(addInterval(jan31, months(1), -2, NY), NY)).toBe('2022-11-30T09:00:00-05:00');
    expect(addInterval(jan31, months(1), 0, NY)).toEqual(jan31);
    expect(formatInstant(addInterval(at('2024-08-31T00:00:00', NY), months(3), 2, NY), NY)).toBe(
      '2025-02-28T00:00:00-05:00',
    );
    expect(formatInstant(addInterval(jan31, days(90), 1, NY), NY)).toBe('2023-05-01T09:00:00-04:00');
  });

  it('rejects a fractional count', () => {
    expectValidation(
      () => addInterval(iso('2026-01-01T00:00:00Z'), months(1), 0.5, 'UTC'),
      'Count: must be an integer.',
    );
  });

  it('measures elapsed milliseconds and whole seconds, truncated toward zero', () => {
    const a = iso('2026-01-01T00:00:00Z');
    const b = iso('2026-01-02T01:01:01.999Z');
    expect(millisecondsBetween(a, b)).toBe(90_061_999);
    expect(secondsBetween(a, b)).toBe(90_061);
    expect(secondsBetween(b, a)).toBe(-90_061);
    const dstDay = at('2024-03-10T12:00:00', NY);
    expect(secondsBetween(startOfLocalDay(dstDay, NY), endOfLocalDay(dstDay, NY))).toBe(82_799);
    expectValidation(() => secondsBetween(a, new Date(Number.NaN)), 'Date: is not a valid date.');
  });
});

describe('independence from the process time zone', () => {
  const original = process.env.TZ;
  afterEach(() => {
    if (original === undefined) delete process.env.TZ;
    else process.env.TZ = original;
  });

  it.each(['Asia/Tokyo', 'America/New_York', 'Europe/Berlin'])('gives the same answers under TZ=%s', (processZone) => {
    process.env.TZ = processZone;
    // Precondition: Node applied the new process zone (otherwise this test would prove nothing).
    const probe = iso('2024-01-01T00:00:00Z').getTimezoneOffset();
    expect(probe).toBe({ 'Asia/Tokyo': -540, 'America/New_York': 300, 'Europe/Berlin': -60 }[processZone]);
    expect(at('2024-11-03T01:30:00', NY)).toEqual(iso('2024-11-03T05:30:00Z'));
    expect(at('2024-03-10T02:30:00', NY)).toEqual(iso('2024-03-10T07:30:00Z'));
    expect(at('2024-03-31T02:30:00', 'UTC')).toEqual(iso('2024-03-31T02:30:00Z'));
    expect(formatInstant(iso('2024-03-10T02:30:00Z'), 'UTC')).toBe('2024-03-10T02:30:00+00:00');
    expect(formatInstant(iso('2024-03-31T02:30:00Z'), 'UTC')).toBe('2024-03-31T02:30:00+00:00');
    expect(localDateString(iso('2024-03-10T23:30:00Z'), 'UTC')).toBe('2024-03-10');
    expect(formatInstant(periodBoundary(at('2023-01-31T09:00:00', NY), 1, months(1), NY), NY)).toBe(
      '2023-02-28T09:00:00-05:00',
    );
  });
});
