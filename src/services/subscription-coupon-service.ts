/**
 * Coupons added to and removed from a live subscription (`POST /subscriptions/{id}/add_coupon.json`,
 * `DELETE /subscriptions/{id}/remove_coupon.json`).
 *
 * When the change takes effect (reference §6): a coupon added to an existing subscription applies
 * "at the next renewal" (a one-time coupon discounts that renewal only; a recurring one starts
 * there), unless the subscription has not paid for any time yet (a trial, or an import before its
 * first billing): then it discounts the first amount due, as a coupon given at signup would. A
 * removal also takes effect at the next renewal. The current period is therefore left as it was
 * assessed: it keeps the coupons it was billed with, so a change within it (an allocation, a
 * migration that keeps the period) is discounted at the rate the rest of the period was paid at
 * ({@link periodCoupons}), and a credit never gives back more than was paid. Recomputed with the
 * period's coupons, the period owes the same before and after the command; the command checks
 * that, and writes no ledger line.
 */

import { normaliseCouponCode } from '../domain/catalog/coupon-code.js';
import { stackingErrors } from '../domain/catalog/coupon-discount.js';
import { BillingError, type BillingErrorDetail, invalid, validationError } from '../errors.js';
import type { CouponRecord, SiteRecord, StorageTransaction, SubscriptionRecord } from '../ports/storage.js';
import { type CommandContext, runCommand } from './command-runner.js';
import { COUPON_NOT_FOUND } from './coupon-service.js';
import { COUPON_ADDED_IN_PERIOD, COUPON_REMOVED_IN_PERIOD, periodCoupons } from './period-assessment.js';
import { loadSite } from './site-lookup.js';
import { loadSubscription, loadView, type SubscriptionDeps, type SubscriptionView } from './subscription-service.js';

/** The engine methods of {@link SubscriptionCouponService}, bound into `site.subscriptions`. */
export const SUBSCRIPTION_COUPON_METHODS = ['addCoupon', 'removeCoupon'] as const;

/** Options of {@link SubscriptionCouponService.addCoupon}. */
export interface AddCouponOptions {
  /**
   * Replace every coupon of the subscription with the ones given (the deprecated `?code=` form of
   * `add_coupon`), instead of adding to them (the `{"codes":[...]}` body).
   */
  readonly replace?: boolean;
}

/** States whose coupons can no longer change: nothing of them will be billed again. */
const ENDED_STATES: readonly string[] = ['cancelled', 'expired', 'failed_to_create'];

/** The attribute of add_coupon errors, as the service names it. */
const CODES = 'codes';

/** Adds and removes the coupons of a live subscription; nothing is charged or credited now. */
export class SubscriptionCouponService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /**
   * Adds coupons to a subscription (all or none): each must exist in the subscription's product
   * family, not be archived or past its end date, have a redemption left, not be on the
   * subscription already, and stack with the others (the service's stacking rules). Each is
   * redeemed once. It discounts from the next renewal (see the module comment); a one-time coupon
   * discounts that renewal only. Returns the subscription as reads show it.
   */
  async addCoupon(
    subdomain: string,
    subscriptionId: number,
    codes: readonly string[] | string,
    options: AddCouponOptions = {},
  ): Promise<SubscriptionView> {
    const requested = readCodes(codes);
    return runCommand(this.#deps, async (ctx) => {
      const { site, subscription } = await loadLive(ctx.tx, subdomain, subscriptionId);
      const replaced = options.replace === true ? subscription.couponCodes : [];
      const kept = subscription.couponCodes.filter((code) => !replaced.includes(code));
      const adding = await couponsToAdd(ctx.tx, site, subscription, requested, kept, ctx.now);
      const applied: CouponRecord[] = [];
      for (const code of kept) {
        const coupon = await ctx.tx.coupons.findByCode(site.id, code);
        if (coupon !== undefined) applied.push(coupon);
      }
      const stacking = stackingErrors(applied, adding);
      if (stacking.length > 0) throw validationError(stacking.map((message) => ({ message, attribute: CODES })));
      for (const coupon of adding) {
        if (!(await ctx.tx.coupons.redeem(site.id, coupon.id, ctx.now))) {
          throw invalid(`Coupon Codes: '${coupon.code}' - Coupon has reached its usage limit.`, CODES);
        }
      }
      let data = replaced.length === 0 ? subscription.data : await dataAfterRemoval(ctx, subscription, replaced);
      const added = { ...((data[COUPON_ADDED_IN_PERIOD] ?? {}) as Record<string, number>) };
      const deferred = ((data.couponDeferred ?? []) as string[]).filter((code) => !replaced.includes(code));
      for (const coupon of adding) {
        added[coupon.code] = subscription.periodIndex;
        // A one-time coupon discounts the next amount due once: the renewal applies deferred
        // coupons and then spends the deferral.
        if (!coupon.recurring && !deferred.includes(coupon.code)) deferred.push(coupon.code);
      }
      data = { ...data, [COUPON_ADDED_IN_PERIOD]: added, couponDeferred: deferred };
      await this.#write(ctx, site, subscription, [...kept, ...adding.map((c) => c.code)], data);
      return loadView(ctx.tx, site.id, subscriptionId);
    });
  }

  /**
   * Removes a coupon from a subscription: from the next renewal on it no longer discounts (the
   * current period keeps the discount it was billed with, and keeps pricing its changes with it).
   * Without a code, the subscription's only coupon is removed. Refused with a 422 when the
   * subscription has no coupon, when the code is not applied to it, or when no code is given and
   * it has several.
   */
  async removeCoupon(subdomain: string, subscriptionId: number, code?: string | null): Promise<SubscriptionView> {
    return runCommand(this.#deps, async (ctx) => {
      const { site, subscription } = await loadLive(ctx.tx, subdomain, subscriptionId);
      if (subscription.couponCodes.length === 0) {
        throw invalid("There's no coupon applied to this subscription", 'subscription');
      }
      let removing: string;
      if (code === undefined || code === null || (typeof code === 'string' && code.trim() === '')) {
        if (subscription.couponCodes.length > 1) {
          throw invalid('Coupon code: the subscription has several coupons; name the one to remove.', 'coupon_code');
        }
        removing = subscription.couponCodes[0]!;
      } else {
        if (typeof code !== 'string') throw invalid('Coupon code: must be text.', 'coupon_code');
        removing = normaliseCouponCode(code);
        if (!subscription.couponCodes.includes(removing)) {
          throw invalid(`Coupon code: '${code.trim()}' is not applied to this subscription.`, 'coupon_code');
        }
      }
      const data = await dataAfterRemoval(ctx, subscription, [removing]);
      const codes = subscription.couponCodes.filter((c) => c !== removing);
      await this.#write(ctx, site, subscription, codes, data);
      return loadView(ctx.tx, site.id, subscriptionId);
    });
  }

  /**
   * Writes the new coupon list (version-checked) after checking, by recomputing the coupons that
   * price the current period, that the command leaves the period's billing as it was: nothing is
   * owed or given back now, so no line is written.
   */
  async #write(
    ctx: CommandContext,
    site: SiteRecord,
    subscription: SubscriptionRecord,
    couponCodes: readonly string[],
    data: Readonly<Record<string, unknown>>,
  ): Promise<void> {
    const lines = await ctx.tx.ledger.listForSubscription(site.id, subscription.id);
    const before = await periodCoupons(ctx.tx, subscription, lines);
    const moved = await ctx.tx.subscriptions.updateAtVersion(site.id, subscription.id, subscription.version, {
      couponCodes,
      data,
      updatedAt: ctx.now,
    });
    if (!moved) throw new BillingError('conflict', 'The subscription was changed by another request; try again.');
    // The next renewal's coupons make its MRR: the MRR history compares it with its last movement.
    ctx.touchMrr?.(site.id, subscription.id);
    const after = await periodCoupons(ctx.tx, moved, lines);
    const key = (coupons: readonly CouponRecord[]) =>
      coupons
        .map((c) => c.code)
        .sort()
        .join(',');
    if (key(before) !== key(after)) {
      // The period's pricing moved: its billing would no longer match its lines. A bug, refused
      // before it commits.
      throw new BillingError('internal', `A coupon change re-priced period ${subscription.periodIndex}; refused.`);
    }
  }
}

/** The site and a subscription whose coupons can still change (`validation` for an ended one). */
async function loadLive(
  tx: StorageTransaction,
  subdomain: string,
  subscriptionId: number,
): Promise<{ site: SiteRecord; subscription: SubscriptionRecord }> {
  const site = await loadSite(tx, subdomain);
  const subscription = await loadSubscription(tx, site.id, subscriptionId);
  if (ENDED_STATES.includes(subscription.state)) {
    const state = subscription.state === 'cancelled' ? 'canceled' : subscription.state.replace(/_/g, ' ');
    throw invalid(`Subscription: the coupons of a ${state} subscription cannot be changed.`, 'subscription');
  }
  return { site, subscription };
}

/** The codes of a request: one code or a non-empty list of them, normalised. */
function readCodes(codes: unknown): string[] {
  const list = typeof codes === 'string' ? [codes] : codes;
  if (!Array.isArray(list) || list.length === 0) throw invalid('Coupon Codes: cannot be blank.', CODES);
  const out: string[] = [];
  for (const code of list) {
    if (typeof code !== 'string' || code.trim() === '') throw invalid('Coupon Codes: cannot be blank.', CODES);
    out.push(code);
  }
  return out;
}

/**
 * The coupons a request adds, every problem at once in the service's `add_coupon` wording: not
 * found (or of another product family), archived, expired, used up, named twice, or applied
 * already.
 */
async function couponsToAdd(
  tx: StorageTransaction,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  requested: readonly string[],
  kept: readonly string[],
  now: Date,
): Promise<CouponRecord[]> {
  const product = await tx.catalog.findProduct(site.id, subscription.productId);
  const problems: BillingErrorDetail[] = [];
  const adding: CouponRecord[] = [];
  for (const raw of requested) {
    const label = `Coupon Codes: '${raw.trim()}' - `;
    const problem = (message: string) => problems.push({ message: `${label}${message}`, attribute: CODES });
    const code = normaliseCouponCode(raw);
    const coupon = await tx.coupons.findByCode(site.id, code);
    if (coupon === undefined || product === undefined || coupon.familyId !== product.familyId) {
      problem(COUPON_NOT_FOUND);
    } else if (coupon.archivedAt !== null) {
      problem('Coupon is invalid.');
    } else if (coupon.endDate !== null && now.getTime() > coupon.endDate.getTime()) {
      problem('Coupon code has expired.');
    } else if (coupon.conversionLimit !== null && coupon.redemptions >= coupon.conversionLimit) {
      problem('Coupon has reached its usage limit.');
    } else if (kept.includes(coupon.code)) {
      problem('Coupon is already applied to this subscription.');
    } else if (adding.some((c) => c.code === coupon.code)) {
      problem('Coupon is listed more than once.');
    } else {
      adding.push(coupon);
    }
  }
  if (problems.length > 0) throw validationError(problems);
  return adding;
}

/**
 * The subscription's data after `codes` come off it: no longer deferred to the next amount due,
 * no longer "added in this period"; one that priced the current period is recorded as removed in
 * it, so it keeps pricing the period's changes ({@link COUPON_REMOVED_IN_PERIOD}).
 */
async function dataAfterRemoval(
  ctx: CommandContext,
  subscription: SubscriptionRecord,
  codes: readonly string[],
): Promise<Record<string, unknown>> {
  const lines = await ctx.tx.ledger.listForSubscription(subscription.siteId, subscription.id);
  const pricing = new Set((await periodCoupons(ctx.tx, subscription, lines)).map((c) => c.code));
  const added = { ...((subscription.data[COUPON_ADDED_IN_PERIOD] ?? {}) as Record<string, number>) };
  const removed: Record<string, number> = {};
  for (const [code, index] of Object.entries(
    (subscription.data[COUPON_REMOVED_IN_PERIOD] ?? {}) as Record<string, number>,
  )) {
    // Only the current period's removals still matter.
    if (index === subscription.periodIndex) removed[code] = index;
  }
  for (const code of codes) {
    delete added[code];
    if (pricing.has(code)) removed[code] = subscription.periodIndex;
  }
  return {
    ...subscription.data,
    couponDeferred: ((subscription.data.couponDeferred ?? []) as string[]).filter((code) => !codes.includes(code)),
    [COUPON_ADDED_IN_PERIOD]: added,
    [COUPON_REMOVED_IN_PERIOD]: removed,
  };
}
