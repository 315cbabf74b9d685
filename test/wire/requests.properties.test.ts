import { BillingError } from 'billing-engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  adjustmentRequest,
  cancelSubscriptionRequest,
  chargeRequest,
  componentCreateRequest,
  componentUpdateRequest,
  couponCodeQuery,
  couponRequest,
  createSubscriptionRequest,
  creditRequest,
  customerRequest,
  metadataNamesQuery,
  metadataRequest,
  metafieldsRequest,
  metafieldUpdateRequest,
  migrationRequest,
  noteRequest,
  parseOptionalWireRequest,
  parseWireParams,
  parseWireRequest,
  parseWireRequestList,
  paymentProfileRequest,
  paymentRequest,
  productFamilyRequest,
  productFamilyUpdateRequest,
  productRequest,
  reactivateParams,
  refundRequest,
  subscriptionListQuery,
  transactionListParams,
  updateSubscriptionRequest,
  type WireRequest,
} from '../../src/wire/index.js';

const requests: WireRequest<unknown>[] = [
  createSubscriptionRequest,
  updateSubscriptionRequest,
  cancelSubscriptionRequest,
  customerRequest,
  productRequest,
  productFamilyRequest,
  paymentProfileRequest,
  couponRequest,
  componentCreateRequest('on_off_component'),
  componentUpdateRequest,
  chargeRequest,
  adjustmentRequest,
  creditRequest,
  paymentRequest,
  refundRequest,
  noteRequest,
  migrationRequest,
  productFamilyUpdateRequest,
  metadataRequest,
  metafieldsRequest,
  metafieldUpdateRequest,
];

/** Runs `read`; true when it returned or threw a 422 BillingError, false for anything else. */
function onlyValidationErrors(read: () => unknown): boolean {
  try {
    read();
    return true;
  } catch (error) {
    return error instanceof BillingError && error.code === 'validation' && error.httpStatus === 422;
  }
}

const keys = fc.constantFrom(
  'product_handle',
  'product_id',
  'customer_id',
  'customer_attributes',
  'credit_card_attributes',
  'next_billing_at',
  'first_name',
  'email',
  'price_in_cents',
  'interval',
  'interval_unit',
  'taxable',
  'full_number',
  'expiration_month',
  'cancel_at_end_of_period',
  'coupon_code',
  'coupon_codes',
  'metafields',
  'snap_day',
  'amount',
  'amount_in_cents',
  'memo',
  'payment_id',
  'unit_price',
  'prices',
  'scope',
  'product_change_delayed',
  'next_product_id',
  'proration',
  '__proto__',
  'constructor',
);
const body = fc.oneof(
  fc.jsonValue(),
  fc.dictionary(keys, fc.oneof(fc.jsonValue(), fc.dictionary(keys, fc.jsonValue()))),
);

describe('wire request properties', () => {
  it('any JSON either parses or gives a 422 validation error, never another failure', () => {
    fc.assert(
      fc.property(body, fc.constantFrom(...requests), (inner, request) => {
        expect(onlyValidationErrors(() => parseWireRequest(request, { [request.wrapper]: inner }))).toBe(true);
        expect(onlyValidationErrors(() => parseWireRequest(request, inner))).toBe(true);
        expect(onlyValidationErrors(() => parseOptionalWireRequest(request, inner))).toBe(true);
        expect(onlyValidationErrors(() => parseWireRequestList(request, { [request.wrapper]: [inner, inner] }))).toBe(
          true,
        );
      }),
      { numRuns: 400 },
    );
  });

  it('any parsed query gives a list query or a 422', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string(),
          fc.oneof(fc.string(), fc.array(fc.string()), fc.dictionary(fc.string(), fc.string())),
        ),
        (query) => {
          expect(onlyValidationErrors(() => parseWireParams(subscriptionListQuery, query))).toBe(true);
          expect(onlyValidationErrors(() => parseWireParams(reactivateParams, query))).toBe(true);
          expect(onlyValidationErrors(() => parseWireParams(transactionListParams, query))).toBe(true);
          expect(onlyValidationErrors(() => parseWireParams(couponCodeQuery, query))).toBe(true);
          expect(onlyValidationErrors(() => parseWireParams(metadataNamesQuery, query))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('ids given as numbers or digit strings read the same', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (id) => {
        const asNumber = parseWireRequest(createSubscriptionRequest, {
          subscription: { customer_id: id, product_id: id },
        });
        const asString = parseWireRequest(createSubscriptionRequest, {
          subscription: { customer_id: String(id), product_id: String(id) },
        });
        expect(asString).toEqual(asNumber);
        expect(asNumber).toEqual({ customerId: id, productId: id });
      }),
    );
  });
});
