import { BillingError } from 'billing-engine';
import { describe, expect, it } from 'vitest';
import {
  adjustmentRequest,
  asPaymentErrorMap,
  asProductChangeError,
  chargeRequest,
  componentCreateRequest,
  componentUpdateRequest,
  couponCodeQuery,
  couponListQuery,
  couponRequest,
  createSubscriptionRequest,
  creditRequest,
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
  paymentRequest,
  productFamilyUpdateRequest,
  readRefundRequest,
  refundRequest,
  refuseUniquenessToken,
  serializeError,
  transactionListParams,
  uniquenessTokenOf,
  updateSubscriptionRequest,
} from '../../src/wire/index.js';

function rejection(run: () => unknown): BillingError {
  try {
    run();
  } catch (error) {
    if (error instanceof BillingError) return error;
    throw error;
  }
  throw new Error('expected a BillingError');
}

describe('coupon requests', () => {
  it('maps the spec fields; null clears on update while a missing key leaves the field alone', () => {
    expect(
      parseWireRequest(couponRequest, {
        coupon: {
          name: 'Ten',
          code: 'ten',
          description: null,
          percentage: '10',
          amount_in_cents: null,
          allow_negative_balance: 'true',
          recurring: 0,
          end_date: '2026-12-31',
          product_family_id: '3',
          compounding_strategy: 'full-price',
        },
      }),
    ).toEqual({
      name: 'Ten',
      code: 'ten',
      description: null,
      percentage: '10',
      amountInCents: null,
      allowNegativeBalance: true,
      recurring: false,
      endDate: '2026-12-31',
      productFamilyId: 3,
      compoundingStrategy: 'full-price',
    });
    expect(parseWireRequest(couponRequest, { coupon: { product_family_id: 'acme-projects' } })).toEqual({
      productFamilyId: 'acme-projects',
    });
    expect(parseWireRequest(couponRequest, { coupon: { name: null } })).toEqual({});
  });

  it('refuses values of the wrong JSON type with the service style', () => {
    expect(
      rejection(() => parseWireRequest(couponRequest, { coupon: { percentage: [10], stackable: 'yes', code: {} } }))
        .messages,
    ).toEqual(['Code: must be a string.', 'Percentage: is not a number.', 'Stackable: must be true or false.']);
  });

  it('couponCodeQuery keeps the code; a family id that names nothing is kept so no family matches', () => {
    expect(parseWireParams(couponCodeQuery, { code: 'A', product_family_id: '7' })).toEqual({
      code: 'A',
      options: { productFamilyId: 7 },
    });
    expect(parseWireParams(couponCodeQuery, { code: ['A'] })).toEqual({ code: '', options: {} });
    expect(parseWireParams(couponCodeQuery, { code: 'A', product_family_id: '' })).toEqual({ code: 'A', options: {} });
    expect(parseWireParams(couponCodeQuery, { code: 'A', product_family_id: '0' }).options).toEqual({
      productFamilyId: '0',
    });
    expect(parseWireParams(couponCodeQuery, { code: 'A', product_family_id: ['1'] }).options).toEqual({
      productFamilyId: '',
    });
  });

  it('couponListQuery defaults to 30 a page and clamps to 200', () => {
    expect(couponListQuery.parse({})).toEqual({ page: 1, perPage: 30 });
    expect(couponListQuery.parse({ per_page: '500', page: '3' })).toEqual({ page: 3, perPage: 200 });
    expect(couponListQuery.parse({ per_page: 'x', page: '-1' })).toEqual({ page: 1, perPage: 30 });
  });
});

describe('component requests', () => {
  it('the create request is wrapped in the kind and adds the kind; brackets pass through for the engine', () => {
    const request = componentCreateRequest('metered_component');
    expect(request.wrapper).toBe('metered_component');
    expect(
      parseWireRequest(request, {
        metered_component: {
          name: 'GB',
          unit_name: 'gb',
          handle: null,
          pricing_scheme: 'volume',
          prices: [{ starting_quantity: 1, ending_quantity: '10', unit_price: '0.50' }, { starting_quantity: 11 }],
        },
      }),
    ).toEqual({
      kind: 'metered_component',
      name: 'GB',
      unitName: 'gb',
      handle: null,
      pricingScheme: 'volume',
      prices: [
        { startingQuantity: 1, endingQuantity: '10', unitPrice: '0.50' },
        { startingQuantity: 11, endingQuantity: undefined, unitPrice: undefined },
      ],
    });
  });

  it('the update request takes only what is sent, under the `component` wrapper', () => {
    expect(parseWireRequest(componentUpdateRequest, { component: { unit_price: 7, taxable: 'false' } })).toEqual({
      unitPrice: 7,
      taxable: false,
    });
    expect(rejection(() => parseWireRequest(componentUpdateRequest, { component: { prices: [1] } })).details).toEqual([
      { message: 'Prices: must be an object.', attribute: 'component.prices.0' },
    ]);
  });
});

describe('metafield and metadata requests', () => {
  it('parseWireRequestList reads one object or a list, and labels problems with the item index', () => {
    expect(parseWireRequestList(metafieldsRequest, { metafields: { name: 'a', input_type: 'text' } })).toEqual([
      { name: 'a', inputType: 'text' },
    ]);
    expect(
      parseWireRequestList(metafieldsRequest, {
        metafields: [{ name: 'b', enum: ['x'], scope: { hosted: ['all', 3], csv: '1', portal: 0 } }, { name: 'c' }],
      }),
    ).toEqual([{ name: 'b', enum: ['x'], scope: { hosted: ['all', '3'], csv: true, portal: false } }, { name: 'c' }]);
    const error = rejection(() => parseWireRequestList(metafieldsRequest, { metafields: [{ name: 'ok' }, 'x'] }));
    expect(error.details).toEqual([{ message: 'Metafields: must be an object.', attribute: 'metafields.1' }]);
    for (const body of [{ metafields: [] }, { metafields: 'x' }, { name: 'a' }, undefined]) {
      expect(rejection(() => parseWireRequestList(metafieldsRequest, body)).messages).toEqual([
        'Request body: must be a JSON object with a "metafields" object or a non-empty list of them.',
      ]);
    }
  });

  it('a metafield update finds the field by current_name, or by name when it keeps it', () => {
    expect(parseWireRequestList(metafieldUpdateRequest, { metafields: { current_name: 'a', name: 'b' } })).toEqual([
      { currentName: 'a', input: { name: 'b' } },
    ]);
    expect(parseWireRequestList(metafieldUpdateRequest, { metafields: { name: 'a', enum: null } })).toEqual([
      { currentName: 'a', input: { name: 'a', enum: null } },
    ]);
    expect(rejection(() => parseWireRequestList(metafieldUpdateRequest, { metafields: {} })).messages).toEqual([
      'Current name: cannot be blank.',
    ]);
  });

  it('metadata values may be strings, numbers or booleans; names come from name and names[]', () => {
    expect(
      parseWireRequestList(metadataRequest, {
        metadata: [{ name: 'a', value: 'x' }, { name: 'b', value: 2 }, { name: 'c', value: false }, { value: 'y' }],
      }),
    ).toEqual([
      { name: 'a', value: 'x' },
      { name: 'b', value: 2 },
      { name: 'c', value: false },
      { name: '', value: 'y' },
    ]);
    expect(
      rejection(() => parseWireRequestList(metadataRequest, { metadata: { name: 'a', value: [1] } })).messages,
    ).toEqual(['Value: must be a string.']);
    expect(metadataNamesQuery.parse({ name: 'a', names: ['b', ' a ', '', 3] })).toEqual(['a', 'b']);
    expect(metadataNamesQuery.parse({ names: 'c' })).toEqual(['c']);
    expect(metadataNamesQuery.parse({})).toEqual([]);
  });
});

describe('ledger requests', () => {
  it('a charge keeps null amounts for the engine, reads flags, and refuses taxes and invoices', () => {
    expect(
      parseWireRequest(chargeRequest, {
        charge: { amount: null, amount_in_cents: '700', memo: 'm', delay_capture: '1', use_negative_balance: false },
      }),
    ).toEqual({ amount: null, amountInCents: '700', memo: 'm', delayCapture: true, useNegativeBalance: false });
    expect(parseWireRequest(chargeRequest, { charge: { accrue_charge: true } })).toEqual({});
    expect(rejection(() => parseWireRequest(chargeRequest, { charge: { amount: {} } })).messages).toEqual([
      'Amount: is not a number.',
    ]);
    expect(
      rejection(() => parseWireRequest(chargeRequest, { charge: { amount: '1', taxable: 'true' } })).messages,
    ).toEqual(['Taxable: taxed charges are not supported by this server yet.']);
  });

  it('adjustments, credits and payments read amount and memo; adjustment periods are refused', () => {
    expect(parseWireRequest(adjustmentRequest, { adjustment: { amount: '-5', adjustment_method: 'target' } })).toEqual({
      amount: '-5',
      adjustmentMethod: 'target',
    });
    expect(
      rejection(() => parseWireRequest(adjustmentRequest, { adjustment: { period_range_end: '2026-01-01' } })).messages,
    ).toEqual(['Period range end: is not supported by this server yet.']);
    expect(parseWireRequest(creditRequest, { credit: { amount: 7, memo: null } })).toEqual({ amount: 7, memo: null });
    expect(parseWireRequest(paymentRequest, { payment: { amount_in_cents: 1 } })).toEqual({ amountInCents: 1 });
  });

  it('a refund is external with refund.external or a top-level external flag', () => {
    const inner = parseWireRequest(refundRequest, { refund: { payment_id: '5', amount: '1', memo: 'm', external: 1 } });
    expect(inner).toEqual({ paymentId: 5, amount: '1', memo: 'm', external: true });
    const plain = parseWireRequest(refundRequest, { refund: { memo: 'm' } });
    expect(readRefundRequest(plain, { external: '1', refund: {} })).toEqual({ memo: 'm', external: true });
    expect(readRefundRequest(plain, { external: false, refund: {} })).toEqual({ memo: 'm' });
    expect(rejection(() => readRefundRequest(plain, { external: 'sometimes' })).messages).toEqual([
      'External: must be true or false.',
    ]);
  });

  it('asPaymentErrorMap turns validation errors into the map body under the stored column name', () => {
    const engineError = rejection(() => parseWireRequest(paymentRequest, { payment: { amount: [] } }));
    const mapped = asPaymentErrorMap(engineError) as BillingError;
    expect(serializeError(mapped)).toEqual({
      status: 422,
      kind: 'json',
      json: { errors: { amount_in_cents: ['Amount: is not a number.'] } },
    });
    const other = new BillingError('not_found', 'Subscription 1 not found.');
    expect(asPaymentErrorMap(other)).toBe(other);
    const plainError = new Error('boom');
    expect(asPaymentErrorMap(plainError)).toBe(plainError);
  });

  it('transactionListParams passes filters on as text, pages leniently, and ignores non-text values', () => {
    expect(
      parseWireParams(transactionListParams, {
        kinds: ['charge', '', 'payment'],
        since_id: '3',
        max_id: '9',
        since_date: '2026-01-01',
        until_date: '2026-01-31',
        order_by: 'created_at',
        direction: 'ASC',
        page: '2',
        per_page: '500',
      }),
    ).toEqual({
      types: ['charge', 'payment'],
      sinceId: '3',
      maxId: '9',
      sinceDate: '2026-01-01',
      untilDate: '2026-01-31',
      orderBy: 'created_at',
      direction: 'asc',
      page: 2,
      perPage: 200,
    });
    expect(parseWireParams(transactionListParams, { kinds: 'refund,credit', direction: ['asc'], page: '0' })).toEqual({
      types: ['refund', 'credit'],
      page: 1,
      perPage: 20,
    });
  });

  it('uniquenessTokenOf reads the top-level token as text; refuseUniquenessToken refuses one', () => {
    expect(uniquenessTokenOf({ uniqueness_token: ' abc ' })).toEqual({ uniquenessToken: 'abc' });
    expect(uniquenessTokenOf({ uniqueness_token: 12 })).toEqual({ uniquenessToken: '12' });
    expect(uniquenessTokenOf({ uniqueness_token: '' })).toEqual({});
    expect(uniquenessTokenOf(undefined)).toEqual({});
    expect(rejection(() => uniquenessTokenOf({ uniqueness_token: true })).messages).toEqual([
      'Uniqueness token: must be a string.',
    ]);
    expect(() => refuseUniquenessToken({ uniqueness_token: null })).not.toThrow();
    expect(rejection(() => refuseUniquenessToken({ uniqueness_token: 'x' })).messages).toEqual([
      'Uniqueness token: is not supported on this endpoint by this server yet.',
    ]);
  });
});

describe('subscription, migration, note and family requests', () => {
  it('signup reads coupon_code and coupon_codes (each once), metafields and snap_day', () => {
    expect(
      parseWireRequest(createSubscriptionRequest, {
        subscription: {
          product_handle: 'pro',
          coupon_code: 'ten',
          coupon_codes: ['TEN', 'one', ''],
          metafields: { color: 'blue', size: 3 },
          snap_day: '15',
        },
      }),
    ).toEqual({
      productHandle: 'pro',
      couponCode: 'ten',
      couponCodes: ['one'],
      metafields: { color: 'blue', size: '3' },
      snapDay: 15,
    });
    expect(
      parseWireRequest(createSubscriptionRequest, { subscription: { coupon_codes: ['A'], snap_day: 'END' } }),
    ).toEqual({ couponCode: 'A', snapDay: 'end' });
    expect(
      rejection(() =>
        parseWireRequest(createSubscriptionRequest, {
          subscription: { coupon_codes: 'A', metafields: ['x'], snap_day: 'soon' },
        }),
      ).messages,
    ).toEqual([
      'Coupon codes: must be a list of coupon codes.',
      'Metafields: must be an object of field names and values.',
      "Snap day: must be a number between 1 and 28 or 'end'.",
    ]);
    expect(
      rejection(() =>
        parseWireRequest(createSubscriptionRequest, { subscription: { coupon_code: 'A', components: [{}] } }),
      ).messages,
    ).toEqual(['Component id: cannot be blank.']);
  });

  it('an update reads product changes: now, delayed, by next_product_id, and the cancellation of a delayed one', () => {
    const read = (subscription: Record<string, unknown>) =>
      parseWireRequest(updateSubscriptionRequest, { subscription });
    expect(read({ product_handle: 'premium' })).toEqual({
      productChange: { productHandle: 'premium', delayed: false },
    });
    expect(read({ product_id: '7', product_change_delayed: 1 })).toEqual({
      productChange: { productId: 7, delayed: true },
    });
    expect(read({ next_product_id: 7 })).toEqual({ productChange: { productId: 7, delayed: true } });
    expect(read({ next_product_id: '' })).toEqual({ productChange: { delayed: true, productId: null } });
    expect(read({ next_product_id: null, product_handle: null })).toEqual({});
    expect(rejection(() => read({ next_product_id: 'pro' })).messages).toEqual([
      'Next product id: must be a product id, or "" to cancel a delayed product change.',
    ]);
  });

  it('asProductChangeError makes an unknown product in the body a 422 and leaves other errors alone', () => {
    const missingProduct = new BillingError('not_found', 'Product x not found.', { data: { what: 'Product' } });
    expect((asProductChangeError(missingProduct, { productHandle: 'x' }) as BillingError).details).toEqual([
      { message: "Product with API Handle 'x' does not exist for this site.", attribute: 'product_handle' },
    ]);
    expect((asProductChangeError(missingProduct, { productId: 4 }) as BillingError).messages).toEqual([
      "Product with id '4' does not exist for this site.",
    ]);
    const missingSubscription = new BillingError('not_found', 'Subscription 1 not found.', {
      data: { what: 'Subscription' },
    });
    expect(asProductChangeError(missingSubscription, { productId: 4 })).toBe(missingSubscription);
  });

  it('a migration reads either preserve_period spelling (true wins) and refuses price points and dropping coupons', () => {
    expect(
      parseOptionalWireRequest(migrationRequest, {
        migration: {
          product_handle: 'pro-x',
          preserve_period: false,
          proration: { preserve_period: 'true' },
          include_trial: 1,
          include_initial_charge: false,
          include_coupons: true,
          proration_date: '2026-01-20',
        },
      }),
    ).toEqual({
      productHandle: 'pro-x',
      preservePeriod: true,
      includeTrial: true,
      includeInitialCharge: false,
      prorationDate: '2026-01-20',
    });
    expect(parseOptionalWireRequest(migrationRequest, undefined)).toEqual({});
    expect(parseOptionalWireRequest(migrationRequest, { migration: { product_id: 3, preserve_period: 0 } })).toEqual({
      productId: 3,
      preservePeriod: false,
    });
    expect(
      rejection(() =>
        parseOptionalWireRequest(migrationRequest, {
          migration: { include_coupons: 'false' },
        }),
      ).messages,
    ).toEqual(['Include coupons: dropping coupons on a migration is not supported by this server yet.']);
    expect(
      rejection(() => parseOptionalWireRequest(migrationRequest, { migration: { proration: 'yes' } })).messages,
    ).toEqual(['Proration: must be an object.']);
  });

  it('notes and family updates send only what is given', () => {
    expect(parseWireRequest(noteRequest, { note: { body: 'b', sticky: 'false' } })).toEqual({
      body: 'b',
      sticky: false,
    });
    expect(parseWireRequest(noteRequest, { note: { body: null } })).toEqual({ body: null });
    expect(parseWireRequest(productFamilyUpdateRequest, { product_family: { description: null } })).toEqual({
      description: null,
    });
    expect(parseWireRequest(productFamilyUpdateRequest, { product_family: { name: 'N', handle: null } })).toEqual({
      name: 'N',
    });
  });
});
