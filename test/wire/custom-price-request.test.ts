import { BillingError } from 'billing-engine';
import { describe, expect, it } from 'vitest';
import { createSubscriptionRequest, migrationRequest, parseWireRequest } from '../../src/wire/index.js';

function rejection(run: () => unknown): BillingError {
  try {
    run();
  } catch (error) {
    if (error instanceof BillingError) return error;
    throw error;
  }
  throw new Error('expected a BillingError');
}

describe('custom_price on the wire', () => {
  it('reads a signup custom price: amounts and intervals as numbers or strings, names as given', () => {
    expect(
      parseWireRequest(createSubscriptionRequest, {
        subscription: {
          product_handle: 'pro',
          custom_price: {
            name: 'Deal',
            handle: 'deal',
            price_in_cents: '4200',
            interval: 1,
            interval_unit: 'months',
            trial_price_in_cents: 0,
            trial_interval: '7',
            trial_interval_unit: 'day',
            initial_charge_in_cents: 300,
            initial_charge_after_trial: 'true',
            expiration_interval: 12,
            expiration_interval_unit: 'month',
            tax_included: false,
          },
        },
      }),
    ).toEqual({
      productHandle: 'pro',
      customPrice: {
        name: 'Deal',
        handle: 'deal',
        priceInCents: '4200',
        interval: 1,
        intervalUnit: 'month',
        trialPriceInCents: 0,
        trialInterval: '7',
        trialIntervalUnit: 'day',
        initialChargeInCents: 300,
        initialChargeAfterTrial: true,
        expirationInterval: 12,
        expirationIntervalUnit: 'month',
      },
    });
  });

  it("reads expiration unit 'never' as no expiration, and refuses it with an interval", () => {
    const read = (custom_price: Record<string, unknown>) =>
      parseWireRequest(migrationRequest, { migration: { product_handle: 'pro', custom_price } });
    expect(read({ price_in_cents: 1, interval: 1, interval_unit: 'day', expiration_interval_unit: 'never' })).toEqual({
      productHandle: 'pro',
      customPrice: { priceInCents: 1, interval: 1, intervalUnit: 'day' },
    });
    const both = rejection(() =>
      read({
        price_in_cents: 1,
        interval: 1,
        interval_unit: 'day',
        expiration_interval: 2,
        expiration_interval_unit: 'never',
      }),
    );
    expect(both.messages).toEqual(["Expiration interval: cannot be given with the expiration interval unit 'never'."]);
    const unit = rejection(() => read({ price_in_cents: 1, expiration_interval_unit: 'year' }));
    expect(unit.messages).toEqual(["Expiration interval unit: must be 'month', 'day' or 'never'."]);
  });

  it('refuses tax-inclusive prices and anything but an object; an empty one says nothing', () => {
    const taxed = rejection(() =>
      parseWireRequest(createSubscriptionRequest, {
        subscription: { product_handle: 'pro', custom_price: { price_in_cents: 1, tax_included: true } },
      }),
    );
    expect(taxed.messages).toEqual(['Tax included: tax-inclusive prices are not supported by this server.']);
    const text = rejection(() =>
      parseWireRequest(migrationRequest, { migration: { product_handle: 'pro', custom_price: 'cheap' } }),
    );
    expect(text.code).toBe('validation');
    expect(parseWireRequest(migrationRequest, { migration: { product_handle: 'pro', custom_price: {} } })).toEqual({
      productHandle: 'pro',
    });
  });
});
