/**
 * The due work a signup schedules for `initial_billing_at` (the start of a delayed signup) and for
 * `expires_at` (the expiration at that instant), and where a delayed signup's periods are anchored.
 * The start itself is planned in `delayed-signup.ts` and run by the renewal worker.
 */
import { addInterval } from '../domain/time/index.js';
import type { ProductTerms, SubscriptionRecord } from '../ports/storage.js';
import type { CommandContext } from './command-runner.js';

/**
 * Where a delayed signup's periods are anchored: at its start, or at the end of the trial its
 * product has, counted from the start (the trial begins when the subscription starts).
 */
export function delayedSignupAnchor(initialBillingAt: Date, terms: ProductTerms, zone: string): Date {
  if (terms.trialInterval === null) return initialBillingAt;
  return addInterval(
    initialBillingAt,
    { count: terms.trialInterval, unit: terms.trialIntervalUnit ?? 'month' },
    1,
    zone,
  );
}

/** Schedules the start of an `awaiting_signup` subscription at its `initial_billing_at` (its current period's end). */
export async function scheduleDelayedSignup(ctx: CommandContext, subscription: SubscriptionRecord): Promise<void> {
  const dueAt = subscription.currentPeriodEndsAt;
  await ctx.tx.dueWork.schedule({
    siteId: subscription.siteId,
    kind: 'delayed_signup',
    subjectId: subscription.id,
    dueAt,
    uniqueKey: `delayed_signup:${subscription.id}@${dueAt.getTime()}`,
    payload: {},
  });
}

/**
 * Schedules the expiration of a subscription at the `expires_at` given at signup: it expires at
 * that instant, not at the next renewal. (A product's expiration interval ends the subscription at
 * the first renewal on or after it, as the service does; that check stays in the renewal.)
 */
export async function scheduleExpiration(ctx: CommandContext, subscription: SubscriptionRecord): Promise<void> {
  if (subscription.expiresAt === null) return;
  const dueAt = subscription.expiresAt;
  await ctx.tx.dueWork.schedule({
    siteId: subscription.siteId,
    kind: 'expiration',
    subjectId: subscription.id,
    dueAt,
    uniqueKey: `expiration:${subscription.id}@${dueAt.getTime()}`,
    payload: {},
  });
}

/** The subscription data key holding a started delayed signup's lines while its payment is in flight. */
export const PENDING_START_KEY = 'pendingStart';

/**
 * Whether the first payment of a delayed signup is in flight (committed, its outcome not yet
 * written): the subscription must not be canceled meanwhile, or the money taken would have no
 * subscription to be written to.
 */
export function delayedStartInFlight(subscription: Pick<SubscriptionRecord, 'state' | 'data'>): boolean {
  return subscription.state === 'awaiting_signup' && subscription.data[PENDING_START_KEY] != null;
}
