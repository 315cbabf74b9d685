import { BillingError } from 'billing-engine';
import { describe, expect, it } from 'vitest';
import {
  cancelSubscriptionRequest,
  createSubscriptionRequest,
  customerRequest,
  delayedCancelRequest,
  holdRequest,
  parseJsonBody,
  parseOptionalWireRequest,
  parseWireParams,
  parseWireRequest,
  paymentProfileRequest,
  productFamilyRequest,
  productRequest,
  reactivateParams,
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

describe('parseJsonBody', () => {
  it('reads JSON, treats a blank body as no body, drops a BOM, and reports malformed JSON', () => {
    expect(parseJsonBody('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonBody('')).toEqual({ ok: true, value: undefined });
    expect(parseJsonBody('  \n ')).toEqual({ ok: true, value: undefined });
    expect(parseJsonBody('\uFEFF[1]')).toEqual({ ok: true, value: [1] });
    expect(parseJsonBody('{"a":')).toEqual({ ok: false, message: 'Body: is not valid JSON.' });
    expect(parseJsonBody('a=1&b=2')).toEqual({ ok: false, message: 'Body: is not valid JSON.' });
  });
});

describe('parseWireRequest', () => {
  it('refuses a body without its wrapper object with a 422 naming the wrapper', () => {
    for (const body of [
      undefined,
      null,
      {},
      [],
      'x',
      { subscription: null },
      { subscription: [] },
      { subscription: 'x' },
      { product: {} },
    ]) {
      const error = rejection(() => parseWireRequest(createSubscriptionRequest, body));
      expect(error.code).toBe('validation');
      expect(error.httpStatus).toBe(422);
      expect(error.messages).toEqual([
        'Request body: must be a JSON object with a "subscription" object, like {"subscription":{...}}.',
      ]);
    }
  });

  it('lists every problem with a service-style label and the attribute path', () => {
    const error = rejection(() =>
      parseWireRequest(createSubscriptionRequest, {
        subscription: {
          customer_id: 'x',
          customer_attributes: { first_name: {} },
          credit_card_attributes: { expiration_year: false },
        },
      }),
    );
    expect(error.messages).toEqual([
      'Customer id: must be a positive whole number.',
      'First name: must be a string.',
      'Credit card expiration year: must be a number or a string.',
    ]);
    expect(error.details.map((d) => d.attribute)).toEqual([
      'subscription.customer_id',
      'subscription.customer_attributes.first_name',
      'subscription.credit_card_attributes.expiration_year',
    ]);
  });
});

describe('request schemas', () => {
  it('product_family: name, handle and description; a missing name is left blank for the engine', () => {
    expect(
      parseWireRequest(productFamilyRequest, {
        product_family: { name: 'A', handle: 'a', description: 'd', extra: 1 },
      }),
    ).toEqual({
      name: 'A',
      handle: 'a',
      description: 'd',
    });
    expect(parseWireRequest(productFamilyRequest, { product_family: { handle: null } })).toEqual({
      name: '',
      description: null,
    });
  });

  it('product: snake_case to camelCase, cents and intervals from strings, booleans from "true"/"false"', () => {
    expect(
      parseWireRequest(productRequest, {
        product: {
          name: 'Pro',
          handle: 'pro',
          price_in_cents: '1000',
          interval: '1',
          interval_unit: 'months',
          trial_interval: 14,
          trial_interval_unit: 'day',
          request_credit_card: 'false',
          require_credit_card: true,
          taxable: '0',
          accounting_code: 'PRO',
          auto_create_signup_page: true,
        },
      }),
    ).toEqual({
      name: 'Pro',
      handle: 'pro',
      priceInCents: '1000',
      interval: 1,
      intervalUnit: 'month',
      trialInterval: 14,
      trialIntervalUnit: 'day',
      requestCreditCard: false,
      requireCreditCard: true,
      taxable: false,
      accountingCode: 'PRO',
    });
  });

  it('product: null clears an optional term but never a required one', () => {
    expect(
      parseWireRequest(productRequest, {
        product: { trial_price_in_cents: null, description: null, name: null, price_in_cents: null },
      }),
    ).toEqual({
      trialPriceInCents: null,
      description: null,
    });
    expect(parseWireRequest(productRequest, { product: {} })).toEqual({});
  });

  it('customer: names, contact and flat address fields', () => {
    expect(
      parseWireRequest(customerRequest, {
        customer: {
          first_name: 'A',
          last_name: 'B',
          email: 'a@b.co',
          reference: 'r',
          organization: null,
          zip: 10001,
          address_2: 'Apt 1',
          vat_number: 'x',
        },
      }),
    ).toEqual({
      firstName: 'A',
      lastName: 'B',
      email: 'a@b.co',
      reference: 'r',
      organization: null,
      address: { zip: '10001', address2: 'Apt 1' },
    });
  });

  it('subscription create: the wrapper, customer_attributes and credit_card_attributes map to the engine input', () => {
    expect(
      parseWireRequest(createSubscriptionRequest, {
        subscription: {
          product_handle: 'pro',
          next_billing_at: '2026-12-11T11:30:39Z',
          customer_attributes: { first_name: 'A', last_name: 'B', email: 'a@b.co', reference: 'r' },
          credit_card_attributes: {
            first_name: 'A',
            last_name: 'B',
            full_number: '4111111111111111',
            expiration_month: '12',
            expiration_year: 2029,
            cvv: 123,
          },
          coupon_code: '',
          components: [],
          ref: 'abc',
        },
      }),
    ).toEqual({
      productHandle: 'pro',
      nextBillingAt: '2026-12-11T11:30:39Z',
      ref: 'abc',
      customer: { firstName: 'A', lastName: 'B', email: 'a@b.co', reference: 'r' },
      creditCard: {
        fullNumber: '4111111111111111',
        expirationMonth: '12',
        expirationYear: 2029,
        cvv: '123',
        firstName: 'A',
        lastName: 'B',
      },
    });
  });

  it('subscription create: ids as strings, and a missing card part handed on blank for the engine', () => {
    expect(
      parseWireRequest(createSubscriptionRequest, {
        subscription: { product_id: '7', customer_id: 106, credit_card_attributes: { full_number: '1' } },
      }),
    ).toEqual({
      productId: 7,
      customerId: 106,
      creditCard: { fullNumber: '1', expirationMonth: '', expirationYear: '' },
    });
  });

  it('subscription create: payment_profile_attributes (the vault import form) map to the engine input', () => {
    expect(
      parseWireRequest(createSubscriptionRequest, {
        subscription: {
          product_handle: 'pro',
          customer_id: 7,
          payment_profile_attributes: {
            vault_token: 'tok_1',
            customer_vault_token: 'cus_1',
            current_vault: 'braintree_blue',
            expiration_year: '2031',
            expiration_month: 8,
            card_type: 'visa',
            last_four: '1111',
          },
        },
      }),
    ).toEqual({
      productHandle: 'pro',
      customerId: 7,
      paymentProfile: {
        vaultToken: 'tok_1',
        customerVaultToken: 'cus_1',
        currentVault: 'braintree_blue',
        expirationMonth: 8,
        expirationYear: '2031',
        cardType: 'visa',
        lastFour: '1111',
      },
    });
  });

  it('subscription create: fields that would bill another amount or at another time are refused, not ignored', () => {
    const error = rejection(() =>
      parseWireRequest(createSubscriptionRequest, {
        subscription: {
          product_handle: 'pro',
          calendar_billing: { snap_day: 1 },
          previous_billing_at: '2026-01-01',
        },
      }),
    );
    expect(error.code).toBe('validation');
    expect(error.messages).toEqual([
      'Calendar billing: is not supported by this server yet.',
      'Previous billing at: is not supported by this server yet.',
    ]);
    // Blank values say nothing, so they are no reason to refuse.
    expect(
      parseWireRequest(createSubscriptionRequest, {
        subscription: { product_handle: 'pro', initial_billing_at: null, custom_price: {}, expires_at: '' },
      }),
    ).toEqual({ productHandle: 'pro' });
  });

  it('subscription create: payment_profile_id, customer_reference, initial_billing_at and expires_at are read', () => {
    expect(
      parseWireRequest(createSubscriptionRequest, {
        subscription: {
          product_handle: 'pro',
          customer_reference: 'ada-1',
          payment_profile_id: '12',
          initial_billing_at: '2027-01-01T09:00:00-05:00',
          expires_at: '2027-06-01',
        },
      }),
    ).toEqual({
      productHandle: 'pro',
      customerReference: 'ada-1',
      paymentProfileId: 12,
      initialBillingAt: '2027-01-01T09:00:00-05:00',
      expiresAt: '2027-06-01',
    });
    const error = rejection(() =>
      parseWireRequest(createSubscriptionRequest, {
        subscription: { product_handle: 'pro', payment_profile_id: 'abc', initial_billing_at: 5 },
      }),
    );
    expect(error.messages).toEqual([
      'Payment profile id: must be a positive whole number.',
      'Initial billing at: must be an ISO 8601 timestamp or a date.',
    ]);
  });

  it('subscription create: the collection method is handed to the engine as given (it reads the names)', () => {
    expect(
      parseWireRequest(createSubscriptionRequest, {
        subscription: { product_handle: 'pro', payment_collection_method: 'invoice' },
      }),
    ).toEqual({ productHandle: 'pro', paymentCollectionMethod: 'invoice' });
    expect(
      parseWireRequest(updateSubscriptionRequest, { subscription: { payment_collection_method: 'remittance' } }),
    ).toEqual({ paymentCollectionMethod: 'remittance' });
  });

  it('subscription update: card with billing address, and next_billing_at', () => {
    expect(
      parseWireRequest(updateSubscriptionRequest, {
        subscription: {
          next_billing_at: '2026-03-01',
          credit_card_attributes: {
            full_number: '1',
            expiration_month: 1,
            expiration_year: '2030',
            billing_zip: '02134',
          },
        },
      }),
    ).toEqual({
      nextBillingAt: '2026-03-01',
      creditCard: { fullNumber: '1', expirationMonth: 1, expirationYear: '2030', billingAddress: { zip: '02134' } },
    });
    expect(
      rejection(() => parseWireRequest(updateSubscriptionRequest, { subscription: { coupon_code: 'X' } })).messages,
    ).toEqual(['Coupon code: cannot be changed here by this server yet.']);
  });

  it('cancel: the body is optional, but unwrapped fields are refused', () => {
    expect(parseOptionalWireRequest(cancelSubscriptionRequest, undefined)).toEqual({});
    expect(parseOptionalWireRequest(cancelSubscriptionRequest, {})).toEqual({});
    expect(
      parseOptionalWireRequest(cancelSubscriptionRequest, {
        subscription: { cancellation_message: 'bye', reason_code: 'x', cancel_at_end_of_period: 1 },
      }),
    ).toEqual({ cancellationMessage: 'bye', reasonCode: 'x', cancelAtEndOfPeriod: true });
    expect(
      parseOptionalWireRequest(cancelSubscriptionRequest, { subscription: { cancel_at_end_of_period: '0' } }),
    ).toEqual({ cancelAtEndOfPeriod: false });
    expect(
      rejection(() => parseOptionalWireRequest(cancelSubscriptionRequest, { cancel_at_end_of_period: 1 })).code,
    ).toBe('validation');
  });

  it('delayed cancel and hold', () => {
    expect(parseOptionalWireRequest(delayedCancelRequest, { subscription: { cancellation_message: 'm' } })).toEqual({
      cancellationMessage: 'm',
    });
    expect(parseOptionalWireRequest(holdRequest, { hold: { automatically_resume_at: '2026-02-01' } })).toEqual({
      automaticallyResumeAt: '2026-02-01',
    });
    expect(parseOptionalWireRequest(holdRequest, undefined)).toEqual({});
  });

  it('reactivate: unwrapped flags, resume as a flag or with require_resume', () => {
    expect(parseWireParams(reactivateParams, { include_trial: '1', preserve_balance: 'false' })).toEqual({
      includeTrial: true,
      preserveBalance: false,
    });
    expect(parseWireParams(reactivateParams, { resume: 'true' })).toEqual({ resume: true });
    expect(parseWireParams(reactivateParams, { resume: 'false' })).toEqual({});
    expect(parseWireParams(reactivateParams, { resume: { require_resume: 'true' } })).toEqual({
      resume: true,
      requireResume: true,
    });
    expect(parseWireParams(reactivateParams, undefined)).toEqual({});
    expect(rejection(() => parseWireParams(reactivateParams, { resume: 'perhaps' })).messages).toEqual([
      'Resume: must be true or false.',
    ]);
    expect(rejection(() => parseWireParams(reactivateParams, { coupon_code: 'X' })).details[0]?.attribute).toBe(
      'coupon_code',
    );
  });

  it('payment_profile: only the given fields', () => {
    expect(
      parseWireRequest(paymentProfileRequest, {
        payment_profile: { expiration_year: 2031, billing_city: 'Boston', first_name: null },
      }),
    ).toEqual({
      expirationYear: 2031,
      billingAddress: { city: 'Boston' },
    });
  });
});
