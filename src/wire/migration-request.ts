import { z } from 'zod';
import type { MigrationInput, MigrationPreview } from '../services/migration-service.js';
import { customPriceFields } from './custom-price-request.js';
import { isGiven } from './subscription-request.js';
import { defineWireRequest } from './wire-request.js';
import { wireBoolean, wireId, wireText, wireTimestampInput } from './wire-scalars.js';

/**
 * The fields of `{"migration":{...}}`, read into a
 * {@link MigrationInput}: `product_handle` or `product_id`, `preserve_period` (also as
 * `proration.preserve_period`; either one true keeps the period), `include_trial`,
 * `include_initial_charge`, `product_price_point_id` or `product_price_point_handle` (a price point of
 * the target product; an id alone names its product) or `custom_price` (terms of the subscription's
 * own, see {@link customPriceFields}), and for a preview `proration_date`.
 * `include_coupons` may only be true (the engine always keeps coupons, the service's default).
 */
export const migrationFields = z
  .object(
    {
      product_handle: wireText.nullish(),
      product_id: wireId.nullish(),
      product_price_point_id: wireId.nullish(),
      product_price_point_handle: wireText.nullish(),
      preserve_period: wireBoolean.nullish(),
      include_trial: wireBoolean.nullish(),
      include_initial_charge: wireBoolean.nullish(),
      include_coupons: wireBoolean.nullish(),
      proration: z.object({ preserve_period: wireBoolean.nullish() }, { error: 'must be an object.' }).nullish(),
      proration_date: wireTimestampInput.nullish(),
      // An empty one says nothing, as on a signup.
      custom_price: z.preprocess((v) => (isGiven(v) ? v : undefined), customPriceFields.optional()),
    },
    { error: 'must be an object.' },
  )
  .superRefine((m, ctx) => {
    if (m.include_coupons === false) {
      ctx.addIssue({
        code: 'custom',
        path: ['include_coupons'],
        message: 'dropping coupons on a migration is not supported by this server yet.',
      });
    }
  })
  .transform((m): MigrationInput => {
    // Either spelling set to true keeps the period: a client that sends both means to keep it.
    const flags = [m.preserve_period, m.proration?.preserve_period].filter((f): f is boolean => f != null);
    const preservePeriod = flags.length === 0 ? undefined : flags.includes(true);
    return {
      ...(m.product_handle == null || m.product_handle === '' ? {} : { productHandle: m.product_handle }),
      ...(m.product_id == null ? {} : { productId: m.product_id }),
      ...(m.product_price_point_id == null ? {} : { pricePointId: m.product_price_point_id }),
      ...(m.product_price_point_handle == null || m.product_price_point_handle === ''
        ? {}
        : { pricePointHandle: m.product_price_point_handle }),
      ...(preservePeriod == null ? {} : { preservePeriod }),
      ...(m.include_trial == null ? {} : { includeTrial: m.include_trial }),
      ...(m.include_initial_charge == null ? {} : { includeInitialCharge: m.include_initial_charge }),
      ...(m.proration_date == null ? {} : { prorationDate: m.proration_date }),
      ...(m.custom_price == null ? {} : { customPrice: m.custom_price }),
    };
  });

/** `POST /subscriptions/{id}/migrations.json` and `.../migrations/preview.json`: body `{"migration":{...}}`. */
export const migrationRequest = defineWireRequest('migration', migrationFields);

/** What a migration would cost, as the preview endpoint writes it: every amount an integer in cents. */
export interface MigrationPreviewJson {
  readonly prorated_adjustment_in_cents: number;
  readonly charge_in_cents: number;
  readonly payment_due_in_cents: number;
  readonly credit_applied_in_cents: number;
}

/** `{"migration":{...}}`, the body of `POST /subscriptions/{id}/migrations/preview.json`. */
export function serializeMigrationPreview(preview: MigrationPreview): { migration: MigrationPreviewJson } {
  return {
    migration: {
      prorated_adjustment_in_cents: preview.proratedAdjustmentInCents,
      charge_in_cents: preview.chargeInCents,
      payment_due_in_cents: preview.paymentDueInCents,
      credit_applied_in_cents: preview.creditAppliedInCents,
    },
  };
}
