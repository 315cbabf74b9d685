/**
 * The wire format of a signup's or a migration's `custom_price`. Its own module: the signup and
 * migration requests read it, and it reads nothing of theirs.
 */
import { z } from 'zod';
import type { ProductPricePointInput } from '../services/price-point-service.js';
import { wireBoolean, wireCents, wireIntervalUnit, wireText } from './wire-scalars.js';

/**
 * A signup's or a migration's `custom_price` (the SDK's SubscriptionCustomPrice), read into a
 * {@link ProductPricePointInput}: the price point fields, each amount or interval a number or a
 * string. `expiration_interval_unit: "never"` means no expiration. `tax_included: true` is refused
 * (the engine adds tax on top of prices, never inside them); the engine checks the rest.
 */
export const customPriceFields = z
  .object(
    {
      name: wireText.nullish(),
      handle: wireText.nullish(),
      price_in_cents: wireCents.nullish(),
      interval: wireCents.nullish(),
      interval_unit: wireIntervalUnit.nullish(),
      trial_price_in_cents: wireCents.nullish(),
      trial_interval: wireCents.nullish(),
      trial_interval_unit: wireIntervalUnit.nullish(),
      initial_charge_in_cents: wireCents.nullish(),
      initial_charge_after_trial: wireBoolean.nullish(),
      expiration_interval: wireCents.nullish(),
      expiration_interval_unit: z
        .unknown()
        .transform((v, ctx): 'month' | 'day' | 'never' | null => {
          if (v === null || v === '') return null;
          if (typeof v === 'string' && v.trim().toLowerCase() === 'never') return 'never';
          const unit = wireIntervalUnit.safeParse(v);
          if (unit.success) return unit.data;
          ctx.addIssue({ code: 'custom', message: "must be 'month', 'day' or 'never'." });
          return z.NEVER;
        })
        .optional(),
      tax_included: wireBoolean.nullish(),
    },
    { error: 'must be an object.' },
  )
  .superRefine((p, ctx) => {
    if (p.tax_included === true)
      ctx.addIssue({
        code: 'custom',
        path: ['tax_included'],
        message: 'tax-inclusive prices are not supported by this server.',
      });
    if (p.expiration_interval_unit === 'never' && p.expiration_interval != null)
      ctx.addIssue({
        code: 'custom',
        path: ['expiration_interval'],
        message: "cannot be given with the expiration interval unit 'never'.",
      });
  })
  .transform((p): ProductPricePointInput => {
    const input: { -readonly [K in keyof ProductPricePointInput]: ProductPricePointInput[K] } = {};
    if (p.name != null) input.name = p.name;
    if (p.handle != null) input.handle = p.handle;
    if (p.price_in_cents != null) input.priceInCents = p.price_in_cents;
    if (p.interval != null) input.interval = p.interval;
    if (p.interval_unit != null) input.intervalUnit = p.interval_unit;
    if (p.initial_charge_after_trial != null) input.initialChargeAfterTrial = p.initial_charge_after_trial;
    if (p.trial_price_in_cents != null) input.trialPriceInCents = p.trial_price_in_cents;
    if (p.trial_interval != null) input.trialInterval = p.trial_interval;
    if (p.trial_interval_unit != null) input.trialIntervalUnit = p.trial_interval_unit;
    if (p.initial_charge_in_cents != null) input.initialChargeInCents = p.initial_charge_in_cents;
    // `never` is no expiration: neither is passed on.
    if (p.expiration_interval != null) input.expirationInterval = p.expiration_interval;
    if (p.expiration_interval_unit != null && p.expiration_interval_unit !== 'never')
      input.expirationIntervalUnit = p.expiration_interval_unit;
    return input;
  });
