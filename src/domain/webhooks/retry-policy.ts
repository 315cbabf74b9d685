import { invalid } from '../../errors.js';
import type { WebhookEndpointStatus } from '../../ports/storage.js';

/**
 * Delays between delivery attempts of one webhook, in milliseconds: attempt 1 as
 * soon as possible, then +10 s, +15 s, +90 s and +180 s; five attempts in all.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [10_000, 15_000, 90_000, 180_000];

/** How an endpoint's failure count maps to its status, and how a paused endpoint is retried. */
export interface EndpointHealthPolicy {
  /** More failures than this pause the endpoint (reference: 25, so the 26th pauses). */
  readonly pauseAfter: number;
  /** More failures than this disable it: no more webhooks are generated (reference: 50). */
  readonly disableAfter: number;
  /** Retry interval of webhooks to a paused endpoint (reference: 2 h). */
  readonly pausedRetryMs: number;
  /** Attempts a webhook gets while its endpoint is paused (reference: 24 tries over 48 h). */
  readonly pausedAttempts: number;
}

/** The service's endpoint health rules: paused after 25 failures, then 24 retries 2 h apart, disabled after 50. */
export const DEFAULT_ENDPOINT_HEALTH: EndpointHealthPolicy = {
  pauseAfter: 25,
  disableAfter: 50,
  pausedRetryMs: 2 * 60 * 60_000,
  pausedAttempts: 24,
};

/** The complete retry policy of a delivery worker. */
export interface WebhookRetryPolicy {
  /** Delays after attempts 1, 2, ...; attempts in all = length + 1. */
  readonly schedule: readonly number[];
  readonly health: EndpointHealthPolicy;
}

/** Checks a configured schedule: finite, non-negative delays; returns a frozen copy. */
export function checkRetrySchedule(schedule: readonly number[]): readonly number[] {
  for (const delay of schedule) {
    if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) {
      throw invalid('Retry schedule: every delay must be a non-negative number of milliseconds.', 'retry_schedule');
    }
  }
  return Object.freeze([...schedule]);
}

/** Checks a health policy: whole numbers, `disableAfter >= pauseAfter`, at least one paused attempt. */
export function checkEndpointHealth(health: EndpointHealthPolicy): EndpointHealthPolicy {
  const whole = (n: number) => Number.isSafeInteger(n) && n >= 0;
  if (!whole(health.pauseAfter) || !whole(health.disableAfter) || health.disableAfter < health.pauseAfter) {
    throw invalid(
      'Endpoint health: pauseAfter and disableAfter must be whole numbers with disableAfter >= pauseAfter.',
    );
  }
  if (!whole(health.pausedAttempts) || health.pausedAttempts < 1 || !(health.pausedRetryMs >= 0)) {
    throw invalid('Endpoint health: pausedAttempts must be at least 1 and pausedRetryMs non-negative.');
  }
  return Object.freeze({ ...health });
}

/** The status an endpoint has with this many consecutive failures: enabled, paused, then disabled. */
export function endpointStatusFor(failureCount: number, health: EndpointHealthPolicy): WebhookEndpointStatus {
  if (failureCount > health.disableAfter) return 'disabled';
  if (failureCount > health.pauseAfter) return 'paused';
  return 'enabled';
}

/** What to do after a failed attempt: try again after a delay, or give up. `of` is the attempt budget. */
export type RetryDecision =
  | { readonly action: 'retry'; readonly delayMs: number; readonly of: number }
  | { readonly action: 'give_up'; readonly of: number };

/**
 * The decision after attempt number `attempt` (1-based, counted since the webhook was created or
 * last replayed) failed, given the endpoint's status after counting that failure. An enabled
 * endpoint follows the schedule; a paused one is retried every `pausedRetryMs` up to
 * `pausedAttempts` attempts; a disabled one gets nothing more.
 */
export function retryDecision(
  attempt: number,
  status: WebhookEndpointStatus,
  policy: WebhookRetryPolicy,
): RetryDecision {
  if (status === 'disabled') return { action: 'give_up', of: attempt };
  if (status === 'paused') {
    const of = policy.health.pausedAttempts;
    return attempt >= of ? { action: 'give_up', of } : { action: 'retry', delayMs: policy.health.pausedRetryMs, of };
  }
  const of = policy.schedule.length + 1;
  const delay = policy.schedule[attempt - 1];
  return delay === undefined || attempt >= of ? { action: 'give_up', of } : { action: 'retry', delayMs: delay, of };
}

/**
 * How far back an endpoint's recovery looks for webhooks that gave up during its outage: the
 * longest a webhook can be retried before it gives up (the schedule, then every paused attempt),
 * 48 hours and five minutes by default. Older failures stay failed; a replay still sends them.
 */
export function requeueWindowMs(policy: WebhookRetryPolicy): number {
  const schedule = policy.schedule.reduce((total, delay) => total + delay, 0);
  return schedule + policy.health.pausedAttempts * policy.health.pausedRetryMs;
}

/**
 * Whether a failed delivery counts against a paused endpoint (paused endpoints are
 * retried every 2 h, 24 tries over 48 h, and disabled past 50 failures). At most one failure counts
 * per paused interval, the first one at least `pausedRetryMs` after the last counted one
 * (`lastCountedAt`: when the endpoint was paused or last counted), so an endpoint is disabled only
 * after about two days of failed retries, never because many webhooks were queued for it when it
 * went down. Enabled endpoints count every failure.
 */
export function countsAgainstPaused(lastCountedAt: Date, at: Date, health: EndpointHealthPolicy): boolean {
  return at.getTime() >= lastCountedAt.getTime() + health.pausedRetryMs;
}

/** `last_error` as the service writes it: `404 Resource Not Found (retry 5 of 5)`. */
export function deliveryErrorText(error: string, attempt: number, of: number): string {
  return `${error} (retry ${attempt} of ${Math.max(of, attempt)})`;
}
