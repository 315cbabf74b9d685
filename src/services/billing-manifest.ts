import { computeDiscount } from '../domain/catalog/coupon-discount.js';
import { BillingError } from '../errors.js';
import type {
  CouponRecord,
  ProductTerms,
  SiteRecord,
  StorageTransaction,
  SubscriptionRecord,
} from '../ports/storage.js';
import { renewalLines } from './advance-invoice-service.js';
import type { CommandContext } from './command-runner.js';
import { planDelayedStart, readStoredStart } from './delayed-signup.js';
import { assessNextPeriod, renewalCoupons } from './period-assessment.js';

/** One line of a billing manifest. */
export interface ManifestLineItem {
  /** `credit` only for what a renewal gives back of an advance invoice that billed more. */
  readonly transactionType: 'charge' | 'credit';
  readonly kind: string;
  readonly amountInCents: number;
  readonly memo: string;
  readonly discountAmountInCents: number;
  readonly taxableAmountInCents: number;
  readonly componentId: number | null;
}

/** One coupon's part of a manifest, as the renewal writes it: a negative amount takes off, a positive one gives back. */
export interface ManifestDiscount {
  readonly code: string;
  readonly amountInCents: number;
  readonly memo: string;
}

/**
 * What the next renewal will charge, line by line (the call record's `next_billing_manifest`); for
 * a delayed signup not started yet, what its start will charge.
 */
export interface BillingManifest {
  /** `trial` only for the start of a delayed signup whose product has a trial. */
  readonly periodType: 'recurring' | 'trial';
  readonly startDate: Date;
  readonly endDate: Date;
  readonly subtotalInCents: number;
  readonly totalTaxInCents: number;
  readonly totalDiscountInCents: number;
  readonly totalInCents: number;
  readonly lineItems: readonly ManifestLineItem[];
  /** The coupon lines the renewal writes, one per coupon (after an advance invoice: their differences). */
  readonly discounts: readonly ManifestDiscount[];
  /**
   * The uid of the advance invoice that already billed the period, when there is one: the lines
   * and totals are then what the renewal bills beyond it (a charge grown since, metered usage), or
   * gives back (a credit), not the whole period.
   */
  readonly advanceInvoiceUid: string | null;
}

/**
 * The subscription's next renewal as the renewal will bill it: the pinned product version's
 * price (and a setup fee deferred past a trial), its components at their allocation and pinned
 * version, metered usage so far, and the discounts of the coupons that apply then; when an advance
 * invoice already billed the period, only the difference the renewal bills (the renewal's own
 * `renewalLines`). Reads only.
 */
export async function nextBillingManifest(
  tx: StorageTransaction,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  now: Date,
): Promise<BillingManifest> {
  const version = await tx.catalog.findProductVersion(site.id, subscription.productId, subscription.productVersion);
  if (!version)
    throw new BillingError('storage', `Subscription ${subscription.id} refers to a missing product version.`);
  const readOnly: CommandContext = { tx, now, record: () => {} };
  if (subscription.state === 'awaiting_signup') return startManifest(tx, site, subscription, version.terms);
  const assessment = await assessNextPeriod(readOnly, site, subscription, version.terms, { resetMetered: false });
  const { period, coupons } = assessment;
  const { lines, advance } = await renewalLines(tx, subscription, assessment);
  const items = lines.flatMap((l) => (l.type === 'adjustment' ? [] : [{ ...l, type: l.type }]));
  const discounts = lines
    .filter((l) => l.type === 'adjustment')
    .map((l) => ({ code: l.couponCode ?? '', amountInCents: l.amountInCents, memo: l.memo }));
  // The per-line split of the same discount the renewal writes one line per coupon for. A
  // difference after an advance invoice has no per-line split: its coupon lines are differences
  // of whole-period discounts, shown in the totals and `discounts` only.
  return manifestOf(
    'recurring',
    period,
    items,
    discounts,
    advance === undefined ? coupons : [],
    advance?.invoice.uid ?? null,
  );
}

/**
 * The start of a delayed signup as a manifest: the lines `planDelayedStart` plans at its
 * `initial_billing_at` (the due work writes exactly those), read only (metered usage stays on the
 * balances); while its first payment is in flight, the start already planned and kept in its data.
 */
async function startManifest(
  tx: StorageTransaction,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  terms: ProductTerms,
): Promise<BillingManifest> {
  const at = subscription.currentPeriodEndsAt;
  // While the start's first payment is in flight its lines are already planned (the metered usage
  // they bill is off the balances): those are what the due work writes.
  const start =
    readStoredStart(subscription.data) ??
    (await planDelayedStart({ tx, now: at, record: () => {} }, site, subscription, terms, {
      resetMetered: false,
    }));
  const coupons = (await renewalCoupons(tx, subscription)).filter((c) => start.couponCodes.includes(c.code));
  const items = start.lines.filter((l) => l.type === 'charge').map((l) => ({ ...l, type: 'charge' as const }));
  const discounts = start.lines
    .filter((l) => l.type === 'adjustment')
    .map((l, i) => ({ code: start.couponCodes[i] ?? '', amountInCents: l.amountInCents, memo: l.memo }));
  return manifestOf(
    start.state === 'trialing' ? 'trial' : 'recurring',
    { start: start.periodStart, end: start.periodEnd },
    items,
    discounts,
    coupons,
    null,
  );
}

/**
 * A manifest of billed lines: `items` (charges and credits) and the coupon lines `discounts`,
 * with the discount split per line by `coupons` (none: no per-line split, as for a difference
 * after an advance invoice, whose coupon lines are differences of whole-period discounts).
 */
function manifestOf(
  periodType: BillingManifest['periodType'],
  period: { readonly start: Date; readonly end: Date },
  items: readonly {
    readonly type: 'charge' | 'credit';
    readonly kind: string;
    readonly amountInCents: number;
    readonly memo: string;
    readonly componentId: number | null;
  }[],
  discounts: readonly ManifestDiscount[],
  coupons: readonly CouponRecord[],
  advanceInvoiceUid: string | null,
): BillingManifest {
  const totalDiscount = discounts.reduce((sum, d) => sum - d.amountInCents, 0);
  const perLine = new Map<string, number>();
  if (coupons.length > 0 && totalDiscount !== 0) {
    const split = computeDiscount(
      items.map((item, i) => ({ key: String(i), amountInCents: item.amountInCents })),
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
  const subtotal = items.reduce((sum, item) => sum + item.amountInCents, 0);
  return {
    periodType,
    startDate: period.start,
    endDate: period.end,
    subtotalInCents: subtotal,
    totalTaxInCents: 0,
    totalDiscountInCents: totalDiscount,
    totalInCents: subtotal - totalDiscount,
    lineItems: items.map((item, i) => ({
      transactionType: item.type === 'credit' ? 'credit' : 'charge',
      kind: item.kind,
      amountInCents: item.amountInCents,
      memo: item.memo,
      discountAmountInCents: perLine.get(String(i)) ?? 0,
      taxableAmountInCents: 0,
      componentId: item.componentId,
    })),
    discounts,
    advanceInvoiceUid,
  };
}
