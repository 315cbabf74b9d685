import { describe, expect, it } from 'vitest';
import {
  serializeCustomer,
  serializePaymentProfile,
  serializeProduct,
  serializeProductFamily,
  serializeSubscription,
  serializeTransaction,
  subscriptionJson,
  wireState,
  wireTimestamp,
} from '../../src/wire/index.js';
import { customer, family, payment, productView, profile, subscription, subscriptionView } from './support/records.js';

const NEW_YORK = { timeZone: 'America/New_York', currency: 'USD' } as const;

describe('wire context helpers', () => {
  it('wireTimestamp writes the site zone offset, +00:00 for UTC, and null for no instant', () => {
    const at = new Date('2026-07-04T16:30:45.999Z');
    expect(wireTimestamp(at, NEW_YORK)).toBe('2026-07-04T12:30:45-04:00');
    expect(wireTimestamp(at, { timeZone: 'UTC', currency: 'USD' })).toBe('2026-07-04T16:30:45+00:00');
    expect(wireTimestamp(at, { timeZone: 'Asia/Kolkata', currency: 'INR' })).toBe('2026-07-04T22:00:45+05:30');
    expect(wireTimestamp(null, NEW_YORK)).toBeNull();
  });

  it('wireState spells cancelled per compat and leaves other states alone', () => {
    expect(wireState('cancelled')).toBe('cancelled');
    expect(wireState('cancelled', 'spec')).toBe('cancelled');
    expect(wireState('cancelled', 'chargify')).toBe('canceled');
    expect(wireState('past_due', 'chargify')).toBe('past_due');
  });
});

describe('serializers', () => {
  it('subscription: wrapped, integer cents, offset timestamps, decimal signup_revenue, nested customer, product and card', () => {
    const body = serializeSubscription(subscriptionView, NEW_YORK, family);
    expect(Object.keys(body)).toEqual(['subscription']);
    expect(body.subscription).toMatchObject({
      id: 31,
      state: 'active',
      balance_in_cents: 0,
      product_price_in_cents: 1000,
      product_version_number: 2,
      created_at: '2026-01-15T07:00:00-05:00',
      current_period_started_at: '2026-01-15T07:00:00-05:00',
      current_period_ends_at: '2026-02-15T07:00:00-05:00',
      next_assessment_at: '2026-02-15T07:00:00-05:00',
      canceled_at: null,
      cancel_at_end_of_period: false,
      signup_payment_id: 42,
      signup_revenue: '15.00',
      coupon_code: null,
      coupon_codes: [],
      customer: { id: 11, first_name: 'Ada', email: 'ada@example.com', reference: 'ada-1', city: 'London', zip: 'N1' },
      product: {
        id: 7,
        handle: 'pro',
        version_number: 2,
        product_family: { id: 3, handle: 'acme-projects', name: 'Acme Projects' },
      },
      credit_card: {
        id: 21,
        payment_type: 'credit_card',
        masked_card_number: 'XXXX-XXXX-XXXX-1111',
        card_type: 'visa',
        expiration_month: 12,
        expiration_year: 2030,
        current_vault: 'bogus',
        vault_token: 'tok_abc',
        customer_id: 11,
      },
    });
  });

  it('subscription: state and previous_state follow compat; credit_card is omitted without a card', () => {
    const cancelled = {
      ...subscriptionView,
      subscription: { ...subscription, state: 'cancelled' as const, canceledAt: new Date('2026-01-20T05:00:00Z') },
    };
    expect(subscriptionJson(cancelled, { ...NEW_YORK, compat: 'chargify' })).toMatchObject({
      state: 'canceled',
      previous_state: 'canceled',
      canceled_at: '2026-01-20T00:00:00-05:00',
    });
    expect(subscriptionJson(cancelled, NEW_YORK).state).toBe('cancelled');
    const cardless = subscriptionJson({ ...subscriptionView, paymentProfile: null }, NEW_YORK);
    expect('credit_card' in cardless).toBe(false);
  });

  it('subscription: signup_revenue uses the currency digits and coupon_code the first code', () => {
    const jpy = subscriptionJson(subscriptionView, { timeZone: 'Asia/Tokyo', currency: 'JPY' });
    expect(jpy.signup_revenue).toBe('1500');
    expect(jpy.created_at).toBe('2026-01-15T21:00:00+09:00');
    expect(subscriptionJson(subscriptionView, { timeZone: 'UTC', currency: 'KWD' }).signup_revenue).toBe('1.500');
    const coupons = subscriptionJson(
      { ...subscriptionView, subscription: { ...subscription, couponCodes: ['A', 'B'] } },
      NEW_YORK,
    );
    expect(coupons.coupon_code).toBe('A');
    expect(coupons.coupon_codes).toEqual(['A', 'B']);
  });

  it('subscription: the JSON survives a round trip with no epoch numbers or fractional cents', () => {
    const text = JSON.stringify(serializeSubscription(subscriptionView, NEW_YORK, family));
    expect(JSON.parse(text)).toEqual(serializeSubscription(subscriptionView, NEW_YORK, family));
    expect(text).not.toMatch(/"\w+_at":\d/);
    expect(text).not.toMatch(/_in_cents":-?\d+\./);
  });

  it('product: the terms of the version, both version names, and the family in full or by id', () => {
    expect(serializeProduct(productView, NEW_YORK, family)).toEqual({
      product: {
        id: 7,
        name: 'Pro',
        handle: 'pro',
        description: 'The pro plan',
        accounting_code: 'PRO',
        price_in_cents: 1000,
        interval: 1,
        interval_unit: 'month',
        initial_charge_in_cents: 500,
        initial_charge_after_trial: false,
        trial_price_in_cents: null,
        trial_interval: 14,
        trial_interval_unit: 'day',
        expiration_interval: null,
        expiration_interval_unit: null,
        request_credit_card: true,
        require_credit_card: true,
        taxable: false,
        version_number: 2,
        product_version: 2,
        archived_at: null,
        created_at: '2026-01-15T07:00:00-05:00',
        updated_at: '2026-02-15T07:00:00-05:00',
        product_family: {
          id: 3,
          name: 'Acme Projects',
          handle: 'acme-projects',
          description: null,
          accounting_code: null,
          created_at: '2026-01-15T07:00:00-05:00',
          updated_at: '2026-01-15T07:00:00-05:00',
        },
      },
    });
    expect(serializeProduct(productView, NEW_YORK).product.product_family).toEqual({ id: 3 });
    // A family that is not the product's is not written as if it were.
    expect(serializeProduct(productView, NEW_YORK, { ...family, id: 99 }).product.product_family).toEqual({ id: 3 });
  });

  it('product family and customer are wrapped', () => {
    expect(serializeProductFamily(family, NEW_YORK)).toMatchObject({
      product_family: { id: 3, handle: 'acme-projects' },
    });
    expect(serializeCustomer(customer, NEW_YORK)).toEqual({
      customer: {
        id: 11,
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada@example.com',
        reference: 'ada-1',
        organization: null,
        phone: null,
        address: null,
        address_2: null,
        city: 'London',
        state: null,
        zip: 'N1',
        country: null,
        created_at: '2026-01-15T07:00:00-05:00',
        updated_at: '2026-01-15T07:00:00-05:00',
      },
    });
  });

  it('transaction: transaction_type, the capitalised type, and the ledger fields', () => {
    expect(serializeTransaction(payment, NEW_YORK)).toEqual({
      transaction: {
        id: 42,
        transaction_type: 'payment',
        type: 'Payment',
        kind: null,
        amount_in_cents: 1500,
        memo: 'Payment for: Pro',
        success: true,
        starting_balance_in_cents: 1500,
        ending_balance_in_cents: 0,
        created_at: '2026-01-15T07:00:00-05:00',
        subscription_id: 31,
        customer_id: 11,
        payment_id: null,
        product_id: 7,
        component_id: null,
        gateway_transaction_id: 'ch_000001',
        refunded_amount_in_cents: 0,
      },
    });
    const types = (['charge', 'credit', 'adjustment', 'refund', 'info'] as const).map(
      (type) => serializeTransaction({ ...payment, type }, NEW_YORK).transaction.type,
    );
    expect(types).toEqual(['Charge', 'Credit', 'Adjustment', 'Refund', 'InfoTransaction']);
  });

  it('payment profile: wrapped card fields with payment_type', () => {
    expect(serializePaymentProfile({ ...profile, lastFour: '4444', cardType: 'master' })).toMatchObject({
      payment_profile: {
        id: 21,
        payment_type: 'credit_card',
        masked_card_number: 'XXXX-XXXX-XXXX-4444',
        card_type: 'master',
      },
    });
  });
});
