import type { CouponRecord, ProductFamilyRecord } from '../ports/storage.js';
import { type WireContext, wireTimestamp } from './wire-context.js';

/**
 * A coupon as the service writes it (inside `{"coupon":{...}}`): `percentage` and
 * `conversion_limit` as strings (the SDK rejects a number for them), `amount_in_cents` as an
 * integer, and the service's enum spellings for `discount_type`, `recurring_scheme` and
 * `compounding_strategy`. The discount in major units (`amount`) is left out: its JSON type differs
 * between the service's SDKs, and `amount_in_cents` says the same exactly.
 */
export interface CouponJson {
  readonly id: number;
  readonly name: string;
  readonly code: string;
  readonly description: string | null;
  readonly discount_type: 'percent' | 'amount';
  readonly percentage: string | null;
  readonly amount_in_cents: number | null;
  readonly product_family_id: number;
  readonly product_family_name?: string;
  readonly recurring: boolean;
  readonly recurring_scheme: 'do_not_recur' | 'recur_indefinitely' | 'recur_with_duration';
  readonly duration_period_count: number | null;
  readonly allow_negative_balance: boolean;
  readonly stackable: boolean;
  readonly compounding_strategy: string;
  readonly conversion_limit: string | null;
  readonly start_date: string | null;
  readonly end_date: string | null;
  readonly archived_at: string | null;
  readonly created_at: string | null;
  readonly updated_at: string | null;
}

/** The fields of a coupon, unwrapped. Pass its family to have the family's name written too. */
export function couponJson(coupon: CouponRecord, context: WireContext, family?: ProductFamilyRecord): CouponJson {
  return {
    id: coupon.id,
    name: coupon.name,
    code: coupon.code,
    description: coupon.description,
    discount_type: coupon.percentage === null ? 'amount' : 'percent',
    percentage: coupon.percentage,
    amount_in_cents: coupon.amountInCents,
    product_family_id: coupon.familyId,
    ...(family !== undefined && family.id === coupon.familyId ? { product_family_name: family.name } : {}),
    recurring: coupon.recurring,
    recurring_scheme: !coupon.recurring
      ? 'do_not_recur'
      : coupon.durationPeriodCount === null
        ? 'recur_indefinitely'
        : 'recur_with_duration',
    duration_period_count: coupon.durationPeriodCount,
    allow_negative_balance: coupon.allowNegativeBalance,
    stackable: coupon.stackable,
    compounding_strategy: coupon.compoundingStrategy,
    conversion_limit: coupon.conversionLimit === null ? null : String(coupon.conversionLimit),
    // A coupon can be used from the moment it exists; the engine has no separate start date.
    start_date: wireTimestamp(coupon.createdAt, context),
    end_date: wireTimestamp(coupon.endDate, context),
    archived_at: wireTimestamp(coupon.archivedAt, context),
    created_at: wireTimestamp(coupon.createdAt, context),
    updated_at: wireTimestamp(coupon.updatedAt, context),
  };
}

/** `{"coupon":{...}}`, the body of a coupon create, read, update, archive, find or validate, and the item of a list. */
export function serializeCoupon(
  coupon: CouponRecord,
  context: WireContext,
  family?: ProductFamilyRecord,
): { coupon: CouponJson } {
  return { coupon: couponJson(coupon, context, family) };
}
