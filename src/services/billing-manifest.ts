import { computeDiscount } from '../domain/catalog/coupon-discount.js';
import { BillingError } from '../errors.js';
import type { SiteRecord, StorageTransaction, SubscriptionRecord } from '../ports/storage.js';
import type { CommandContext } from './command-runner.js';
import { assessNextPeriod } from './period-assessment.js';

/** One line of a billing manifest. */
export interface ManifestLineItem {
  readonly transactionType: 'charge';
  readonly kind: string;
  readonly amountInCents: number;
  readonly memo: string;
  readonly discountAmountInCents: number;
  readonly taxableAmountInCents: number;
  readonly componentId: number | null;
}

/** What the next renewal will charge, line by line (the call record's `next_billing_manifest`). */
export interface BillingManifest {
  readonly periodType: 'recurring';
  readonly startDate: Date;
  readonly endDate: Date;
  readonly subtotalInCents: number;
  readonly totalTaxInCents: number;
  readonly totalDiscountInCents: number;
  readonly totalInCents: number;
  readonly lineItems: readonly ManifestLineItem[];
}

/**
 * The subscription's next renewal as the renewal will assess it: the pinned product version's
 * price (and a setup fee deferred past a trial), its components at their allocation and pinned
 * version, metered usage so far, and the discounts of the coupons that apply then. Reads only.
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
  const {
    period,
    charges: items,
    coupons,
  } = await assessNextPeriod(readOnly, site, subscription, version.terms, {
    resetMetered: false,
  });
  // The per-line split of the same discount the renewal writes one line per coupon for.
  const discount = computeDiscount(
    items.map((item, i) => ({ key: String(i), amountInCents: item.amountInCents })),
    coupons.map((c) => ({
      code: c.code,
      percentage: c.percentage,
      amountInCents: c.amountInCents,
      allowNegativeBalance: c.allowNegativeBalance,
      compoundingStrategy: c.compoundingStrategy,
    })),
  );
  const perLine = new Map(discount.perLine.map((d) => [d.key, d.discountInCents]));
  const subtotal = items.reduce((sum, item) => sum + item.amountInCents, 0);
  return {
    periodType: 'recurring',
    startDate: period.start,
    endDate: period.end,
    subtotalInCents: subtotal,
    totalTaxInCents: 0,
    totalDiscountInCents: discount.totalDiscountInCents,
    totalInCents: subtotal - discount.totalDiscountInCents,
    lineItems: items.map((item, i) => ({
      transactionType: 'charge',
      kind: item.kind,
      amountInCents: item.amountInCents,
      memo: item.memo,
      discountAmountInCents: perLine.get(String(i)) ?? 0,
      taxableAmountInCents: 0,
      componentId: item.componentId,
    })),
  };
}
