/** The wire format of churn reason codes, coupon subcodes and usage, site and webhook settings. */
import { z } from 'zod';
import { currencyMinorDigits } from '../domain/money/currency.js';
import { validationError } from '../errors.js';
import type { ReasonCodeRecord } from '../ports/storage.js';
import type { CouponUsageRow, SubcodesResult } from '../services/coupon-service.js';
import type { RenewalPreview } from '../services/lifecycle-service.js';
import type { ReasonCodeInput } from '../services/reason-code-service.js';
import { type WireContext, wireTimestamp } from './wire-context.js';
import { defineWireRequest } from './wire-request.js';
import { wireBoolean, wireInteger, wireText } from './wire-scalars.js';

/**
 * The fields of `{"reason_code":{...}}`: `code`, `description` and `position`. Missing ones are
 * handed on for the engine to report (create) or leave unchanged (update).
 */
export const reasonCodeFields = z
  .object(
    { code: wireText.nullish(), description: wireText.nullish(), position: wireInteger.nullish() },
    { error: 'must be an object.' },
  )
  .transform(
    (r): ReasonCodeInput => ({
      ...(r.code === undefined ? {} : { code: r.code }),
      ...(r.description === undefined ? {} : { description: r.description }),
      ...(r.position == null ? {} : { position: r.position }),
    }),
  );

/** `POST /reason_codes.json` and `PUT /reason_codes/{id}.json`: `{"reason_code":{code, description, position}}`. */
export const reasonCodeRequest = defineWireRequest('reason_code', reasonCodeFields);

/** A reason code as the service writes it (inside `{"reason_code":{...}}`). */
export interface ReasonCodeJson {
  readonly id: number;
  readonly site_id: number;
  readonly code: string;
  readonly description: string;
  readonly position: number;
  readonly created_at: string | null;
  readonly updated_at: string | null;
}

/** `{"reason_code":{...}}`: the body of a create, read or update, and the item of the list. */
export function serializeReasonCode(code: ReasonCodeRecord, context: WireContext): { reason_code: ReasonCodeJson } {
  return {
    reason_code: {
      id: code.id,
      site_id: code.siteId,
      code: code.code,
      description: code.description,
      position: code.position,
      created_at: wireTimestamp(code.createdAt, context),
      updated_at: wireTimestamp(code.updatedAt, context),
    },
  };
}

/**
 * The codes of `{"codes":["A","B"]}` (`POST`/`PUT /coupons/{id}/codes.json`): the list is handed
 * on as sent, for the engine to sort each code into created, duplicate or invalid. A body without
 * a `codes` list is a 422 here.
 */
export function readSubcodesBody(body: unknown): unknown[] {
  const codes =
    typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { codes?: unknown }).codes : undefined;
  if (!Array.isArray(codes)) {
    throw validationError([
      {
        message: 'Request body: must be a JSON object with a "codes" list, like {"codes":["SUB1"]}.',
        attribute: 'codes',
      },
    ]);
  }
  return codes;
}

/** The answer of a subcode create or replace, as the service writes it. */
export function serializeSubcodesResult(result: SubcodesResult): {
  created_codes: string[];
  duplicate_codes: string[];
  invalid_codes: string[];
} {
  return {
    created_codes: [...result.createdCodes],
    duplicate_codes: [...result.duplicateCodes],
    invalid_codes: [...result.invalidCodes],
  };
}

/** One product's use of a coupon (`GET .../coupons/{id}/usage.json`), money in cents and major units. */
export interface CouponUsageJson {
  readonly id: number;
  readonly name: string;
  readonly signups: number;
  readonly savings: number;
  readonly savings_in_cents: number;
  readonly revenue: number;
  readonly revenue_in_cents: number;
}

/**
 * A coupon's usage, one entry per product. `savings` and `revenue` are the major-unit numbers the
 * service writes beside the cents (exact: an integer of minor units divided by the currency's unit).
 */
export function serializeCouponUsage(rows: readonly CouponUsageRow[], context: WireContext): CouponUsageJson[] {
  const unit = 10 ** currencyMinorDigits(context.currency);
  return rows.map((row) => ({
    id: row.productId,
    name: row.productName,
    signups: row.signups,
    savings: row.savingsInCents / unit,
    savings_in_cents: row.savingsInCents,
    revenue: row.revenueInCents / unit,
    revenue_in_cents: row.revenueInCents,
  }));
}

/**
 * `{"renewal_preview":{...}}`: what the next renewal charges, in cents, line by line. Taxes are
 * not computed by the engine: they are 0 and `uncalculated_taxes` is false.
 */
export function serializeRenewalPreview(preview: RenewalPreview, context: WireContext) {
  const m = preview.manifest;
  return {
    renewal_preview: {
      next_assessment_at: wireTimestamp(preview.nextAssessmentAt, context),
      subtotal_in_cents: m.subtotalInCents,
      total_tax_in_cents: m.totalTaxInCents,
      total_discount_in_cents: m.totalDiscountInCents,
      total_in_cents: m.totalInCents,
      existing_balance_in_cents: preview.existingBalanceInCents,
      total_amount_due_in_cents: preview.totalAmountDueInCents,
      uncalculated_taxes: false,
      line_items: m.lineItems.map((item) => ({
        transaction_type: item.transactionType,
        kind: item.kind,
        amount_in_cents: item.amountInCents,
        memo: item.memo,
        discount_amount_in_cents: item.discountAmountInCents,
        taxable_amount_in_cents: item.taxableAmountInCents,
        ...(item.componentId === null ? {} : { component_id: item.componentId }),
        period_range_start: wireTimestamp(m.startDate, context),
        period_range_end: wireTimestamp(m.endDate, context),
      })),
    },
  };
}

/**
 * Reads the optional body of a renewal preview. Its `components` (previewing other quantities
 * than the subscription's) are not supported: refused with a 422 rather than silently ignored.
 */
export function readRenewalPreviewBody(body: unknown): void {
  const components =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as { components?: unknown }).components
      : undefined;
  if (components !== undefined && components !== null && !(Array.isArray(components) && components.length === 0)) {
    throw validationError([
      {
        message: 'Components: previewing a renewal with other components than the subscription has is not supported.',
        attribute: 'components',
      },
    ]);
  }
}

/** `PUT /webhooks/settings.json`: `{"webhooks_enabled": true|false}` (also `"true"`, `1`); anything else is a 422. */
export function readWebhookSettingsBody(body: unknown): boolean {
  const raw =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>).webhooks_enabled
      : undefined;
  const parsed = wireBoolean.safeParse(raw);
  if (raw === undefined || raw === null || !parsed.success) {
    throw validationError([{ message: 'Webhooks enabled: must be true or false.', attribute: 'webhooks_enabled' }]);
  }
  return parsed.data as boolean;
}
