import { describe, expect, it } from 'vitest';
import {
  countsAgainstPaused,
  DEFAULT_ENDPOINT_HEALTH,
  DEFAULT_RETRY_SCHEDULE_MS,
  requeueWindowMs,
} from '../../src/domain/webhooks/index.js';

const HOUR = 3_600_000;

describe('webhook endpoint health during an outage (pure rules)', () => {
  it('counts a paused failure only a full paused interval after the last counted one', () => {
    const pausedAt = new Date('2026-03-02T15:00:00Z');
    const at = (ms: number) => new Date(pausedAt.getTime() + ms);
    expect(countsAgainstPaused(pausedAt, at(0), DEFAULT_ENDPOINT_HEALTH)).toBe(false);
    expect(countsAgainstPaused(pausedAt, at(2 * HOUR - 1), DEFAULT_ENDPOINT_HEALTH)).toBe(false);
    expect(countsAgainstPaused(pausedAt, at(2 * HOUR), DEFAULT_ENDPOINT_HEALTH)).toBe(true);
    expect(countsAgainstPaused(pausedAt, at(30 * HOUR), DEFAULT_ENDPOINT_HEALTH)).toBe(true);
    const hourly = { ...DEFAULT_ENDPOINT_HEALTH, pausedRetryMs: HOUR };
    expect(countsAgainstPaused(pausedAt, at(HOUR), hourly)).toBe(true);
  });

  it('looks back over the longest a webhook is retried: the schedule, then every paused attempt', () => {
    const policy = { schedule: DEFAULT_RETRY_SCHEDULE_MS, health: DEFAULT_ENDPOINT_HEALTH };
    // 10 + 15 + 90 + 180 s, then 24 tries 2 h apart.
    expect(requeueWindowMs(policy)).toBe(295_000 + 48 * HOUR);
    expect(requeueWindowMs({ schedule: [], health: { ...DEFAULT_ENDPOINT_HEALTH, pausedAttempts: 1 } })).toBe(2 * HOUR);
  });
});
