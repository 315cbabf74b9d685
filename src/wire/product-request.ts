import { z } from 'zod';
import type { ProductInput } from '../services/catalog-service.js';
import { defineWireRequest } from './wire-request.js';
import { wireBoolean, wireCents, wireInteger, wireIntervalUnit, wireText } from './wire-scalars.js';

/**
 * The fields of `{"product":{...}}`, read into a {@link ProductInput}. On an
 * update an omitted field keeps the current version's value, and `null` clears an optional term
 * (a trial price, an expiration), so `undefined` and `null` are kept apart.
 */
export const productFields = z
  .object(
    {
      name: wireText.nullish(),
      handle: wireText.nullish(),
      description: wireText.nullish(),
      accounting_code: wireText.nullish(),
      price_in_cents: wireCents.nullish(),
      interval: wireInteger.nullish(),
      interval_unit: wireIntervalUnit.nullish(),
      trial_price_in_cents: wireCents.nullish(),
      trial_interval: wireInteger.nullish(),
      trial_interval_unit: wireIntervalUnit.nullish(),
      initial_charge_in_cents: wireCents.nullish(),
      initial_charge_after_trial: wireBoolean.nullish(),
      expiration_interval: wireInteger.nullish(),
      expiration_interval_unit: wireIntervalUnit.nullish(),
      request_credit_card: wireBoolean.nullish(),
      require_credit_card: wireBoolean.nullish(),
      taxable: wireBoolean.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform((p): ProductInput => {
    const input: { -readonly [K in keyof ProductInput]: ProductInput[K] } = {};
    // Required terms cannot be cleared: null means "not given" for them.
    if (p.name != null) input.name = p.name;
    if (p.handle != null) input.handle = p.handle;
    if (p.price_in_cents != null) input.priceInCents = p.price_in_cents;
    if (p.interval != null) input.interval = p.interval;
    if (p.interval_unit != null) input.intervalUnit = p.interval_unit;
    if (p.initial_charge_after_trial != null) input.initialChargeAfterTrial = p.initial_charge_after_trial;
    if (p.request_credit_card != null) input.requestCreditCard = p.request_credit_card;
    if (p.require_credit_card != null) input.requireCreditCard = p.require_credit_card;
    if (p.taxable != null) input.taxable = p.taxable;
    // Optional terms: null clears them on an update.
    if (p.description !== undefined) input.description = p.description;
    if (p.accounting_code !== undefined) input.accountingCode = p.accounting_code;
    if (p.trial_price_in_cents !== undefined) input.trialPriceInCents = p.trial_price_in_cents;
    if (p.trial_interval !== undefined) input.trialInterval = p.trial_interval;
    if (p.trial_interval_unit !== undefined) input.trialIntervalUnit = p.trial_interval_unit;
    if (p.initial_charge_in_cents !== undefined) input.initialChargeInCents = p.initial_charge_in_cents;
    if (p.expiration_interval !== undefined) input.expirationInterval = p.expiration_interval;
    if (p.expiration_interval_unit !== undefined) input.expirationIntervalUnit = p.expiration_interval_unit;
    return input;
  });

/** `POST /product_families/{id}/products.json` and `PUT /products/{id}.json`: body `{"product":{...}}`. */
export const productRequest = defineWireRequest('product', productFields);
