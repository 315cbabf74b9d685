import { z } from 'zod';
import type { CouponInput, CouponValidateOptions } from '../services/coupon-service.js';
import { isGiven } from './subscription-request.js';
import { defineWireRequest } from './wire-request.js';
import { wireBoolean, wireDecimal, wireIdOrHandle, wireInteger, wireText, wireTimestampInput } from './wire-scalars.js';

/**
 * The fields of `{"coupon":{...}}`, read into a {@link CouponInput}
 * for create and update alike. `percentage` and `amount` pass through as sent (a string keeps
 * `"12.5"` exact); `null` is kept apart from a missing key because on an update `null` clears a
 * field (`end_date`, `conversion_limit`, or one kind of discount when the other is given).
 */
export const couponFields = z
  .object(
    {
      name: wireText.nullish(),
      code: wireText.nullish(),
      description: wireText.nullish(),
      percentage: wireDecimal.nullish(),
      amount_in_cents: wireDecimal.nullish(),
      amount: wireDecimal.nullish(),
      recurring: wireBoolean.nullish(),
      duration_period_count: wireInteger.nullish(),
      end_date: wireTimestampInput.nullish(),
      allow_negative_balance: wireBoolean.nullish(),
      stackable: wireBoolean.nullish(),
      compounding_strategy: wireText.nullish(),
      conversion_limit: wireDecimal.nullish(),
      product_family_id: wireIdOrHandle.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform((c): CouponInput => {
    const input: { -readonly [K in keyof CouponInput]: CouponInput[K] } = {};
    // Required text is the engine's to report when missing ("Name: cannot be blank."), so null means "not sent".
    if (c.name != null) input.name = c.name;
    if (c.code != null) input.code = c.code;
    if (c.recurring != null) input.recurring = c.recurring;
    if (c.allow_negative_balance != null) input.allowNegativeBalance = c.allow_negative_balance;
    if (c.stackable != null) input.stackable = c.stackable;
    if (c.product_family_id != null) input.productFamilyId = c.product_family_id;
    // The engine checks the spelling against its closed list and answers 422 for any other value.
    if (c.compounding_strategy != null)
      input.compoundingStrategy = c.compounding_strategy as NonNullable<CouponInput['compoundingStrategy']>;
    // Clearable fields: null clears them on an update.
    if (c.description !== undefined) input.description = c.description;
    if (c.percentage !== undefined) input.percentage = c.percentage;
    if (c.amount_in_cents !== undefined) input.amountInCents = c.amount_in_cents;
    if (c.amount !== undefined) input.amount = c.amount;
    if (c.duration_period_count !== undefined) input.durationPeriodCount = c.duration_period_count;
    if (c.end_date !== undefined) input.endDate = c.end_date;
    if (c.conversion_limit !== undefined) input.conversionLimit = c.conversion_limit;
    return input;
  });

/** `POST /coupons.json`, `POST /product_families/{id}/coupons.json` and `PUT /coupons/{id}.json`: body `{"coupon":{...}}`. */
export const couponRequest = defineWireRequest('coupon', couponFields);

/** A coupon look-up by code (`find` and `validate`): the code, and for `validate` the family it must belong to. */
export interface CouponCodeQuery {
  /** The code as sent; blank when missing, which the engine answers as not found. */
  readonly code: string;
  readonly options: CouponValidateOptions;
}

/**
 * Reads `code` and `product_family_id` of `GET /coupons/find.json` and `/coupons/validate.json`
 * from a parsed query. Nothing here is refused: a code that is missing or not a string simply
 * cannot be found, which is the service's 404. A family id that names no family is kept (as a
 * handle nothing has), so that the code is judged in no family rather than in every family.
 */
export const couponCodeQuery = z.record(z.string(), z.unknown()).transform((q): CouponCodeQuery => {
  const code = typeof q.code === 'string' ? q.code : '';
  const raw = q.product_family_id;
  if (!isGiven(raw)) return { code, options: {} };
  const family = wireIdOrHandle.safeParse(raw);
  return { code, options: { productFamilyId: family.success ? family.data : typeof raw === 'string' ? raw : '' } };
});
