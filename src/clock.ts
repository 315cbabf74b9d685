import type { Clock } from './ports/clock.js';

/** The wall clock. The only place in the engine that reads the system time. */
export const systemClock: Clock = Object.freeze({
  now: () => new Date(),
});

/**
 * A clock that moves only when told to: the engine's test clock. With `runDue` it simulates any
 * span of billing deterministically.
 */
export class ManualClock implements Clock {
  #now: number;

  constructor(start: Date | string | number = '2026-01-01T00:00:00Z') {
    this.#now = toEpoch(start);
  }

  /** The current instant of this clock. */
  now(): Date {
    return new Date(this.#now);
  }

  /** Moves the clock to `instant`. Moving backwards is allowed (to replay a scenario) but rarely wanted. */
  set(instant: Date | string | number): void {
    this.#now = toEpoch(instant);
  }

  /** Moves the clock forward by a duration in milliseconds, or by days/hours/minutes/seconds. */
  advance(by: number | { days?: number; hours?: number; minutes?: number; seconds?: number; ms?: number }): Date {
    // A unit it does not know (`months`, a typo) would otherwise count as zero and leave the clock
    // where it was: a test would then assert on a renewal that never came due.
    if (typeof by === 'object')
      for (const unit of Object.keys(by))
        if (!DURATION_UNITS.has(unit))
          throw new RangeError(
            `ManualClock.advance: unknown unit "${unit}" (days, hours, minutes, seconds or ms; months vary in length, so set() the instant instead)`,
          );
    const ms =
      typeof by === 'number'
        ? by
        : (by.days ?? 0) * 86_400_000 +
          (by.hours ?? 0) * 3_600_000 +
          (by.minutes ?? 0) * 60_000 +
          (by.seconds ?? 0) * 1000 +
          (by.ms ?? 0);
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('ManualClock.advance takes a non-negative duration');
    this.#now += ms;
    return this.now();
  }
}

/** The units `ManualClock.advance` takes. */
const DURATION_UNITS: ReadonlySet<string> = new Set(['days', 'hours', 'minutes', 'seconds', 'ms']);

function toEpoch(value: Date | string | number): number {
  const epoch = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(epoch)) throw new RangeError(`Not an instant: ${String(value)}`);
  return epoch;
}
