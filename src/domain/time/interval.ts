import { invalid } from '../../errors.js';

/** The calendar unit of a billing interval; weeks and years are written as 7 days and 12 months. */
export type IntervalUnit = 'day' | 'month';

/**
 * A billing interval such as 1 month, 3 months or 14 days (a product's `interval` and
 * `interval_unit`). Months are calendar months with the day clamped to the month's length; days are
 * calendar days in the site's zone, so a 1-day period across a DST change lasts 23 or 25 hours.
 */
export interface Interval {
  readonly count: number;
  readonly unit: IntervalUnit;
}

/**
 * Throws a validation error unless `interval` has a positive safe-integer `count`
 * (`Interval: must be greater than 0.`, attribute `interval`) and a `day` or `month` unit
 * (`Interval unit: must be 'day' or 'month'.`, attribute `interval_unit`). A zero or fractional
 * count would make every period empty or unending, so it is refused before any arithmetic.
 */
export function assertInterval(interval: unknown): asserts interval is Interval {
  const candidate = (typeof interval === 'object' && interval !== null ? interval : {}) as Partial<
    Record<keyof Interval, unknown>
  >;
  const { count, unit } = candidate;
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count <= 0) {
    throw invalid('Interval: must be greater than 0.', 'interval');
  }
  if (unit !== 'day' && unit !== 'month') throw invalid("Interval unit: must be 'day' or 'month'.", 'interval_unit');
}
