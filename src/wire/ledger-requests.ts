import { z } from 'zod';
import { BillingError, validationError } from '../errors.js';
import type { AdjustmentInput, ChargeInput, CreditInput, RefundInput } from '../services/ledger-service.js';
import { isGiven } from './subscription-request.js';
import { defineWireRequest, isPlainObject, parseWireParams } from './wire-request.js';
import { wireBoolean, wireDecimal, wireId, wireText } from './wire-scalars.js';

// `amount` (major units) and `amount_in_cents` pass through as sent; null is kept as null because
// `{"amount": null}` must reach the engine to get its "Amount: is not a number.".
const amountShape = {
  amount: wireDecimal.nullish(),
  amount_in_cents: wireDecimal.nullish(),
  memo: wireText.nullish(),
};

type AmountWire = { amount?: string | number | null; amount_in_cents?: string | number | null };

function amountsOf(a: AmountWire): { amount?: string | number | null; amountInCents?: string | number | null } {
  return {
    ...(a.amount === undefined ? {} : { amount: a.amount }),
    ...(a.amount_in_cents === undefined ? {} : { amountInCents: a.amount_in_cents }),
  };
}

function memoOf(memo: string | null | undefined): { memo?: string | null } {
  return memo === undefined ? {} : { memo };
}

/**
 * The fields of `{"charge":{...}}`: `amount` or `amount_in_cents` (the latter wins),
 * `memo`, `delay_capture`, `accrue_on_failure`, `use_negative_balance`. `taxable: true` and a
 * collection method other than `automatic` are refused, since the engine would charge without
 * the tax or the invoice the client asked for. `accrue_charge` (an allocation flag the old client
 * sends here) is ignored like every other unknown key.
 */
export const chargeFields = z
  .object(
    {
      ...amountShape,
      delay_capture: wireBoolean.nullish(),
      accrue_on_failure: wireBoolean.nullish(),
      use_negative_balance: wireBoolean.nullish(),
      taxable: wireBoolean.nullish(),
      payment_collection_method: wireText.nullish(),
    },
    { error: 'must be an object.' },
  )
  .superRefine((c, ctx) => {
    if (c.taxable === true)
      ctx.addIssue({
        code: 'custom',
        path: ['taxable'],
        message: 'taxed charges are not supported by this server yet.',
      });
    if (c.payment_collection_method != null && c.payment_collection_method !== 'automatic') {
      ctx.addIssue({
        code: 'custom',
        path: ['payment_collection_method'],
        message: "must be 'automatic'; other collection methods are not supported by this server yet.",
      });
    }
  })
  .transform(
    (c): ChargeInput => ({
      ...amountsOf(c),
      ...memoOf(c.memo),
      ...(c.delay_capture == null ? {} : { delayCapture: c.delay_capture }),
      ...(c.accrue_on_failure == null ? {} : { accrueOnFailure: c.accrue_on_failure }),
      ...(c.use_negative_balance == null ? {} : { useNegativeBalance: c.use_negative_balance }),
    }),
  );

/** `POST /subscriptions/{id}/charges.json`: body `{"charge":{...}}` plus an optional top-level `uniqueness_token`. */
export const chargeRequest = defineWireRequest('charge', chargeFields);

/**
 * The fields of `{"adjustment":{...}}`: a signed `amount` or `amount_in_cents`,
 * `memo`, and `adjustment_method` (`target` sets the balance to the amount). A reporting period
 * (`period_range_start`/`_end`) is refused because the engine cannot record one.
 */
export const adjustmentFields = z
  .object(
    {
      ...amountShape,
      adjustment_method: wireText.nullish(),
      period_range_start: z.unknown().optional(),
      period_range_end: z.unknown().optional(),
    },
    { error: 'must be an object.' },
  )
  .superRefine((a, ctx) => {
    for (const key of ['period_range_start', 'period_range_end'] as const) {
      if (isGiven(a[key]))
        ctx.addIssue({ code: 'custom', path: [key], message: 'is not supported by this server yet.' });
    }
  })
  .transform(
    (a): AdjustmentInput => ({
      ...amountsOf(a),
      ...memoOf(a.memo),
      // The engine checks the method against its list and answers 422 for any other value.
      ...(a.adjustment_method == null
        ? {}
        : { adjustmentMethod: a.adjustment_method as NonNullable<AdjustmentInput['adjustmentMethod']> }),
    }),
  );

/** `POST /subscriptions/{id}/adjustments.json`: body `{"adjustment":{...}}`. */
export const adjustmentRequest = defineWireRequest('adjustment', adjustmentFields);

/** The fields of a credit or an external payment: `amount` or `amount_in_cents`, and `memo`. */
export const creditFields = z
  .object(amountShape, { error: 'must be an object.' })
  .transform((c): CreditInput => ({ ...amountsOf(c), ...memoOf(c.memo) }));

/** `POST /subscriptions/{id}/credits.json`: body `{"credit":{amount|amount_in_cents, memo}}`. */
export const creditRequest = defineWireRequest('credit', creditFields);

/** `POST /subscriptions/{id}/payments.json`: body `{"payment":{amount|amount_in_cents, memo}}`. */
export const paymentRequest = defineWireRequest('payment', creditFields);

/**
 * The fields of `{"refund":{...}}`: `payment_id`, `amount` or `amount_in_cents`,
 * `memo`, and `external` (also accepted at the top level, see {@link readRefundRequest}).
 */
export const refundFields = z
  .object(
    {
      ...amountShape,
      payment_id: wireId.nullish(),
      external: wireBoolean.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform(
    (r): RefundInput => ({
      ...amountsOf(r),
      ...memoOf(r.memo),
      ...(r.payment_id == null ? {} : { paymentId: r.payment_id }),
      ...(r.external == null ? {} : { external: r.external }),
    }),
  );

/** `POST /subscriptions/{id}/refunds.json`: body `{"refund":{...}}`, optionally with a top-level `external`. */
export const refundRequest = defineWireRequest('refund', refundFields);

const refundTopLevel = z.object({ external: wireBoolean.nullish() }, { error: 'must be an object.' });

/**
 * Reads a refund body: the wrapper's fields, with the top-level `"external": 1` of the classic API
 * or `refund.external: true` of the old client making it a
 * manual refund. Either one set to true is enough.
 */
export function readRefundRequest(fields: RefundInput, body: unknown): RefundInput {
  const top = parseWireParams(refundTopLevel, isPlainObject(body) ? body : {}, 'body');
  return top.external === true ? { ...fields, external: true } : fields;
}

/**
 * The attribute an external payment's error map files a message under. The service names the
 * stored column (`amount_in_cents`) whichever amount field was sent.
 */
function paymentErrorKey(attribute: string | undefined): string {
  const key = (attribute ?? 'base').replace(/^payment\./, '');
  return key === 'amount' ? 'amount_in_cents' : key;
}

/**
 * Re-shapes a validation error of `POST /subscriptions/{id}/payments.json` into the map body that
 * endpoint uses (`{"errors":{"amount_in_cents":["Amount: is not a number."]}}`).
 * Anything else (not found, duplicate token) is returned unchanged.
 */
export function asPaymentErrorMap(error: unknown): unknown {
  if (!(error instanceof BillingError) || error.code !== 'validation') return error;
  return validationError(
    error.details.map((d) => ({ ...d, attribute: paymentErrorKey(d.attribute) })),
    'map',
  );
}
