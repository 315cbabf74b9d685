/**
 * Signup previews (`POST /subscriptions/preview.json`) and purging a subscription of a test site
 * (`POST /subscriptions/{id}/purge.json`).
 *
 * A signup preview runs the signup itself, through {@link SubscriptionService.create}, in one
 * transaction that is always rolled back, against a gateway that approves every charge without
 * contacting anything (src/services/preview.ts): so it prices exactly as the signup would (the
 * same plan, coupons, components, trials and price points), it refuses what the signup would
 * refuse with the same errors, and it keeps nothing: no row, no event, no webhook, no charge.
 * A delayed signup (`initial_billing_at` in the future) bills nothing at signup: its preview shows
 * what its start will bill, written in the same rolled-back transaction as the due work will write
 * it at that instant (`writeStartForPreview`: trial and setup fee, or the first period with its
 * setup fee), and the renewal after it.
 */

import { computeDiscount } from '../domain/catalog/coupon-discount.js';
import { BillingError, invalid } from '../errors.js';
import type { BillingEvent } from '../events.js';
import type { PaymentGateway } from '../ports/gateway.js';
import type {
  CouponRecord,
  PurgeSummary,
  Storage,
  StorageTransaction,
  SubscriptionRecord,
  TransactionRecord,
} from '../ports/storage.js';
import { type BillingManifest, type ManifestLineItem, nextBillingManifest } from './billing-manifest.js';
import { runCommand } from './command-runner.js';
import { writeStartForPreview } from './delayed-signup.js';
import { claimOpenCollection, releaseOpenCollection, subscriptionCollection } from './payment-runner.js';
import { previewCommand } from './preview.js';
import { loadSite } from './site-lookup.js';
import {
  type CreateSubscriptionInput,
  loadSubscription,
  loadView,
  type SubscriptionDeps,
  SubscriptionService,
  type SubscriptionView,
} from './subscription-service.js';

/** One line of a signup preview's manifest: a manifest line with the product it is for. */
export interface SignupManifestLineItem extends ManifestLineItem {
  readonly productId: number;
  readonly productHandle: string;
  readonly productName: string;
  readonly periodRangeStart: Date;
  readonly periodRangeEnd: Date;
}

/** What one period of a previewed signup charges, line by line (integer minor units). */
export interface SignupManifest
  extends Omit<BillingManifest, 'periodType' | 'lineItems' | 'discounts' | 'advanceInvoiceUid'> {
  /** `trial` for the trial a signup starts with, else `recurring`. */
  readonly periodType: 'recurring' | 'trial';
  /** A new subscription owes nothing before its signup: always 0. */
  readonly existingBalanceInCents: number;
  readonly lineItems: readonly SignupManifestLineItem[];
}

/** What a signup would charge now and at its first renewal; nothing of it was kept. */
export interface SignupPreview {
  /**
   * The signup's own charge: its first period (or trial), setup fee, components and coupons. For
   * a delayed signup, what its start bills at `initial_billing_at` (nothing is charged at signup).
   */
  readonly currentBillingManifest: SignupManifest;
  /** The first renewal (after a delayed signup's start), as the renewal would assess it. */
  readonly nextBillingManifest: SignupManifest;
}

/** Input of {@link SubscriptionAdminService.purge}. */
export interface PurgeInput {
  /** The id of the subscription's customer, as confirmation (`?ack=`); required. */
  readonly ack: unknown;
  /** What else to remove: `customer` and/or `payment_profile` (`?cascade[]=`). */
  readonly cascade?: unknown;
}

/** A purged subscription as it was before the purge, and what the purge removed. */
export interface PurgeResult {
  readonly view: SubscriptionView;
  readonly removed: PurgeSummary;
}

/** The cascade options the service knows. */
const CASCADES = ['customer', 'payment_profile'] as const;

/**
 * Stands in for a customer when a preview names none: a preview prices a product (a pricing page
 * has no customer yet), and the signup it runs needs one.
 */
const PREVIEW_CUSTOMER = { firstName: 'Preview', lastName: 'Customer', email: 'preview@example.com' } as const;

/**
 * Stands in for a card when a preview brings none (the service previews without one): the signup
 * it runs would otherwise refuse to charge. The simulated gateway never sees a real card.
 */
const PREVIEW_PAYMENT_PROFILE = {
  vaultToken: 'preview',
  lastFour: '0000',
  expirationMonth: 12,
  expirationYear: 2199,
} as const;

/** Options of {@link SubscriptionAdminService}. */
export interface SubscriptionAdminOptions {
  /**
   * The storage signup previews run on (default the commands' storage). A preview never charges
   * anything, so the engine passes its storage without the guard that refuses live sites' payments
   * when it has no gateway: a live site can be priced before the engine can take its money.
   */
  readonly previewStorage?: Storage;
}

/** Signup previews and purging a subscription. */
export class SubscriptionAdminService {
  readonly #deps: SubscriptionDeps;
  readonly #previewStorage: Storage;

  constructor(deps: SubscriptionDeps, options: SubscriptionAdminOptions = {}) {
    this.#deps = deps;
    this.#previewStorage = options.previewStorage ?? deps.storage;
  }

  /** The storage, clock and gateway the commands run on. */
  protected get deps(): SubscriptionDeps {
    return this.#deps;
  }

  /**
   * What signing up with `input` would charge now and at the first renewal. Runs the signup in a
   * transaction that is rolled back, against a simulated gateway (see the module comment); errors
   * are the signup's. Without a customer or a payment method the preview supplies stand-ins, so a
   * product can be priced before anyone signs up.
   */
  async previewSignup(subdomain: string, input: CreateSubscriptionInput): Promise<SignupPreview> {
    const signup: CreateSubscriptionInput = {
      ...input,
      // An existing customer (by id, reference or its payment profile) needs no stand-in.
      ...(input.customerId === undefined &&
      input.customer === undefined &&
      input.customerReference === undefined &&
      input.paymentProfileId === undefined
        ? { customer: PREVIEW_CUSTOMER }
        : {}),
      ...(input.creditCard === undefined && input.paymentProfile === undefined && input.paymentProfileId === undefined
        ? { paymentProfile: PREVIEW_PAYMENT_PROFILE }
        : {}),
    };
    const outcome = await previewCommand(
      this.#previewStorage,
      (storage, gateway) => previewEngine(storage, gateway, this.#deps),
      async (engine) => {
        const view = await engine.subscriptions.create(subdomain, signup);
        return engine.storage.transaction(async (tx) => {
          const site = await loadSite(tx, subdomain);
          // A delayed signup bills nothing now: its charge is the start's, written as the due work
          // will write it at `initial_billing_at` (rolled back with the rest of the preview).
          const subscription =
            view.subscription.state === 'awaiting_signup'
              ? await writeStartForPreview(tx, site, view.subscription)
              : view.subscription;
          const lines = await tx.ledger.listForSubscription(site.id, subscription.id);
          const coupons = await couponsOf(tx, site.id, subscription);
          const next = await nextBillingManifest(tx, site, subscription, this.#deps.clock.now());
          return {
            currentBillingManifest: signupManifest(view, subscription, lines, coupons),
            nextBillingManifest: withProduct(next, view, 'recurring'),
          };
        });
      },
    );
    return outcome.result;
  }

  /**
   * Removes a subscription and every record it owns (see {@link PurgeSummary}), as the service
   * does on a test site only. `ack` must be the id of the subscription's customer. With cascade
   * `customer`, the customer goes too (refused while it has another subscription), with its
   * payment profiles; with `payment_profile`, the customer's payment profiles that no other
   * subscription uses. Refused while a payment of the subscription is open (its outcome is not
   * known yet), and while another command holds the subscription's collection claim. Returns the
   * subscription as it was.
   */
  async purge(subdomain: string, subscriptionId: number, input: PurgeInput): Promise<PurgeResult> {
    const cascade = readCascade(input.cascade);
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      if (site.mode !== 'test')
        throw invalid('Subscriptions can only be purged on a site in test mode; this site is live.', 'site');
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      checkAck(input.ack, subscription);
      const withCustomer = cascade.has('customer');
      if (withCustomer && (await ctx.tx.subscriptions.countForCustomer(site.id, subscription.customerId)) > 1) {
        throw invalid(
          "Cascade: the customer has other subscriptions, so it cannot be purged with this one; purge them first or leave out cascade 'customer'.",
          'cascade',
        );
      }
      const open = await ctx.tx.purge.openPaymentAttempts(
        site.id,
        subscriptionId,
        withCustomer ? subscription.customerId : null,
      );
      if (open.length > 0) {
        throw invalid(
          'Subscription: a payment of it is in progress and its outcome is not known yet; try the purge again when it has settled.',
          'subscription',
        );
      }
      // Held for the purge's transaction, so a command collecting for this subscription meanwhile
      // is refused (or, if it claimed first, the purge is); released with the purge's commit.
      const claim = subscriptionCollection(subscriptionId);
      await claimOpenCollection(
        ctx.tx,
        site.id,
        claim,
        ctx.now,
        'A payment for this subscription is in progress; nothing was purged. Try again when it has finished.',
      );
      const view = await loadView(ctx.tx, site.id, subscriptionId);
      const removed = await ctx.tx.purge.purgeSubscription(site.id, subscriptionId, {
        customer: withCustomer,
        paymentProfiles: cascade.has('payment_profile'),
      });
      if (removed === undefined) {
        throw new BillingError('storage', `Subscription ${subscriptionId} disappeared while it was purged.`);
      }
      await releaseOpenCollection(ctx.tx, site.id, claim);
      return { view, removed };
    });
  }
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const SUBSCRIPTION_ADMIN_METHODS = ['previewSignup', 'purge'] as const;

/**
 * The part of an engine a signup preview runs (the signup preview here, signup proformas in
 * `invoices/proforma-service.ts`): the signup over the preview's storage and gateway.
 */
export function previewEngine(storage: Storage, gateway: PaymentGateway, deps: SubscriptionDeps) {
  const listeners: ((event: BillingEvent) => void)[] = [];
  return {
    storage,
    // No webhook fan-out: a preview's events are never delivered (and are rolled back anyway).
    subscriptions: new SubscriptionService({
      storage,
      clock: deps.clock,
      gateway,
      emitter: {
        emit(_key, event) {
          for (const listener of listeners) listener(event);
        },
      },
    }),
    on(_key: '*', listener: (event: BillingEvent) => void) {
      listeners.push(listener);
      return () => {
        listeners.splice(listeners.indexOf(listener), 1);
      };
    },
  };
}

async function couponsOf(tx: StorageTransaction, siteId: number, subscription: SubscriptionRecord) {
  const coupons: CouponRecord[] = [];
  for (const code of subscription.couponCodes) {
    const coupon = await tx.coupons.findByCode(siteId, code);
    if (coupon !== undefined) coupons.push(coupon);
  }
  return coupons;
}

/**
 * The signup's charge as a manifest, from the lines the signup wrote: its charges are the line
 * items, and its coupon lines the discount, split per line exactly as the signup computed it.
 */
function signupManifest(
  view: SubscriptionView,
  subscription: SubscriptionRecord,
  lines: readonly TransactionRecord[],
  coupons: readonly CouponRecord[],
): SignupManifest {
  const charges = lines.filter((l) => l.type === 'charge');
  const discountInCents = lines
    .filter((l) => l.type === 'adjustment' && l.kind === 'coupon')
    .reduce((sum, l) => sum - l.amountInCents, 0);
  const perLine = new Map<string, number>();
  if (discountInCents > 0) {
    const split = computeDiscount(
      charges.map((c, i) => ({ key: String(i), amountInCents: c.amountInCents })),
      coupons.map((c) => ({
        code: c.code,
        percentage: c.percentage,
        amountInCents: c.amountInCents,
        allowNegativeBalance: c.allowNegativeBalance,
        compoundingStrategy: c.compoundingStrategy,
      })),
    );
    for (const d of split.perLine) perLine.set(d.key, d.discountInCents);
  }
  const subtotal = charges.reduce((sum, c) => sum + c.amountInCents, 0);
  return withProduct(
    {
      periodType: 'recurring',
      startDate: subscription.currentPeriodStartedAt,
      endDate: subscription.currentPeriodEndsAt,
      subtotalInCents: subtotal,
      totalTaxInCents: 0,
      totalDiscountInCents: discountInCents,
      totalInCents: subtotal - discountInCents,
      lineItems: charges.map((c, i) => ({
        transactionType: 'charge',
        kind: c.kind ?? 'baseline',
        amountInCents: c.amountInCents,
        memo: c.memo,
        discountAmountInCents: perLine.get(String(i)) ?? 0,
        taxableAmountInCents: 0,
        componentId: c.componentId,
      })),
    },
    view,
    subscription.state === 'trialing' ? 'trial' : 'recurring',
  );
}

/** A manifest with the product on each line, its period on each line, and no existing balance. */
function withProduct(
  manifest: Omit<BillingManifest, 'discounts' | 'advanceInvoiceUid'>,
  view: SubscriptionView,
  periodType: 'recurring' | 'trial',
): SignupManifest {
  const { discounts: _discounts, advanceInvoiceUid: _advance, ...rest } = manifest as BillingManifest;
  return {
    ...rest,
    periodType,
    existingBalanceInCents: 0,
    lineItems: manifest.lineItems.map((item) => ({
      ...item,
      productId: view.product.product.id,
      productHandle: view.product.product.handle,
      productName: view.product.version.terms.name,
      periodRangeStart: manifest.startDate,
      periodRangeEnd: manifest.endDate,
    })),
  };
}

/** The cascade options asked for; anything but `customer` and `payment_profile` is refused. */
function readCascade(value: unknown): Set<(typeof CASCADES)[number]> {
  if (value === undefined || value === null) return new Set();
  const given = Array.isArray(value) ? value : [value];
  const out = new Set<(typeof CASCADES)[number]>();
  for (const item of given) {
    const name = typeof item === 'string' ? item.trim() : item;
    if (!CASCADES.includes(name as (typeof CASCADES)[number])) {
      throw invalid(`Cascade: '${String(item)}' is not one of customer, payment_profile.`, 'cascade');
    }
    out.add(name as (typeof CASCADES)[number]);
  }
  return out;
}

/** The confirmation: `ack` must be the id of the subscription's customer. */
function checkAck(ack: unknown, subscription: SubscriptionRecord): void {
  const text = typeof ack === 'number' ? String(ack) : typeof ack === 'string' ? ack.trim() : '';
  if (text === '') throw invalid("Ack: must be given: the id of the subscription's customer.", 'ack');
  if (!/^\d+$/.test(text) || Number(text) !== subscription.customerId) {
    throw invalid("Ack: must equal the id of the subscription's customer.", 'ack');
  }
}
