/**
 * The due work a signup schedules for `initial_billing_at` (the start of a delayed signup) and for
 * `expires_at` (the expiration at that instant), and where a delayed signup's periods are anchored.
 * The start itself is planned in `delayed-signup.ts` and run by the renewal worker.
 */
import { addInterval } from '../domain/time/index.js';
import { BillingError, invalid } from '../errors.js';
import type { ProductTerms, SiteRecord, SubscriptionRecord } from '../ports/storage.js';
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

/**
 * The expiry a product's expiration interval gives a subscription whose life begins at `start`
 * (a signup's now, or a delayed signup's start), in the site's zone; null when the product does
 * not expire.
 */
export function productExpiry(start: Date, terms: ProductTerms, zone: string): Date | null {
  if (terms.expirationInterval === null || terms.expirationInterval <= 0) return null;
  return addInterval(
    start,
    { count: terms.expirationInterval, unit: terms.expirationIntervalUnit ?? 'month' },
    1,
    zone,
  );
}

/**
 * Whether an `awaiting_signup` subscription's `expires_at` came from its product's expiration
 * interval rather than from the caller. The subscription keeps no flag for it; the two are told
 * apart by what each leaves behind: an `expires_at` given at signup schedules an `expiration` due
 * row (see {@link scheduleExpiration}), a derived one does not and is the product's interval
 * counted from the start (`currentPeriodEndsAt` while awaiting). An expiry set by an override
 * differs from that instant (one set to exactly that instant is taken as derived).
 */
export async function expiryFromProduct(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  terms: ProductTerms,
): Promise<boolean> {
  if (subscription.expiresAt === null) return false;
  const derived = productExpiry(subscription.currentPeriodEndsAt, terms, site.timeZone);
  if (derived === null || derived.getTime() !== subscription.expiresAt.getTime()) return false;
  return (await ctx.tx.dueWork.pendingFor(site.id, subscription.id, ['expiration'])).length === 0;
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

/**
 * A billing-date change of an `awaiting_signup` subscription: it moves the start
 * (`initial_billing_at`) to `at`, or to now when `at` is not in the future (the start is then due
 * at once: `runNow`, run by the caller after its commit). The periods are anchored again at the
 * new start (after the product's trial, counted from it), the start's due work is scheduled
 * again, and `billing_date_change` is recorded with the previous date. Nothing is charged.
 * An expiry that came from the product's expiration interval (see {@link expiryFromProduct}) moves
 * with the start: it is the interval counted from the new start, as the signup counted it from the
 * old one. Refused (422) while the start's first payment is in flight, and for a start at or after
 * an expiration the caller gave (which stays where it is).
 */
export async function moveDelayedStart(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  at: Date,
): Promise<{ subscription: SubscriptionRecord; runNow: boolean }> {
  if (subscription.state !== 'awaiting_signup')
    throw new BillingError('internal', `Subscription ${subscription.id} is not awaiting its signup.`);
  if (delayedStartInFlight(subscription))
    throw invalid(
      'Next billing at: the subscription is starting and its first payment is in progress; try again when it has settled.',
      'next_billing_at',
    );
  const when = at.getTime() < ctx.now.getTime() ? ctx.now : at;
  const version = await ctx.tx.catalog.findProductVersion(site.id, subscription.productId, subscription.productVersion);
  if (!version)
    throw new BillingError('storage', `Subscription ${subscription.id} refers to a missing product version.`);
  const movesExpiry = await expiryFromProduct(ctx, site, subscription, version.terms);
  if (!movesExpiry && subscription.expiresAt !== null && when.getTime() >= subscription.expiresAt.getTime())
    throw invalid(
      `Next billing at: must be before the subscription expires (${subscription.expiresAt.toISOString()}).`,
      'next_billing_at',
    );
  await ctx.tx.dueWork.cancelFor(site.id, subscription.id, ['delayed_signup'], ctx.now);
  const moved = await ctx.tx.subscriptions.updateAtVersion(site.id, subscription.id, subscription.version, {
    periodAnchorAt: delayedSignupAnchor(when, version.terms, site.timeZone),
    currentPeriodEndsAt: when,
    nextAssessmentAt: when,
    ...(movesExpiry ? { expiresAt: productExpiry(when, version.terms, site.timeZone) } : {}),
    updatedAt: ctx.now,
  });
  if (!moved) throw new BillingError('conflict', 'The subscription was changed by another request; try again.');
  await scheduleDelayedSignup(ctx, moved);
  ctx.record({
    siteId: site.id,
    key: 'billing_date_change',
    subjectType: 'subscription',
    subjectId: subscription.id,
    payload: {
      subscription: {
        id: subscription.id,
        previous_billing_date: subscription.nextAssessmentAt?.toISOString() ?? null,
        next_billing_date: when.toISOString(),
      },
    },
  });
  return { subscription: moved, runNow: when.getTime() <= ctx.now.getTime() };
}
