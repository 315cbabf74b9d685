/** The wire format of price points of products (requests and serializers). */
import { z } from 'zod';
import type { IntervalUnit, PricePointType } from '../ports/storage.js';
import type { ProductPricePointInput, ProductPricePointView } from '../services/price-point-service.js';
import { type WireContext, wireTimestamp } from './wire-context.js';
import { defineWireRequest } from './wire-request.js';
import { wireBoolean, wireCents, wireInteger, wireIntervalUnit, wireText } from './wire-scalars.js';

/**
 * The fields of `{"price_point":{...}}`, read into a {@link ProductPricePointInput}. `null` clears
 * an optional term on an update (a trial, an initial charge, an expiration); for the required ones
 * it means "not given". `use_site_exchange_rate` and `trial_type` are read and ignored: the site has
 * one currency, and a trial's type follows from whether a card is required.
 */
export const productPricePointFields = z
  .object(
    {
      name: wireText.nullish(),
      handle: wireText.nullish(),
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
      use_site_exchange_rate: wireBoolean.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform((p): ProductPricePointInput => {
    const input: { -readonly [K in keyof ProductPricePointInput]: ProductPricePointInput[K] } = {};
    if (p.name != null) input.name = p.name;
    if (p.handle != null) input.handle = p.handle;
    if (p.price_in_cents != null) input.priceInCents = p.price_in_cents;
    if (p.interval != null) input.interval = p.interval;
    if (p.interval_unit != null) input.intervalUnit = p.interval_unit;
    if (p.initial_charge_after_trial != null) input.initialChargeAfterTrial = p.initial_charge_after_trial;
    if (p.trial_price_in_cents !== undefined) input.trialPriceInCents = p.trial_price_in_cents;
    if (p.trial_interval !== undefined) input.trialInterval = p.trial_interval;
    if (p.trial_interval_unit !== undefined) input.trialIntervalUnit = p.trial_interval_unit;
    if (p.initial_charge_in_cents !== undefined) input.initialChargeInCents = p.initial_charge_in_cents;
    if (p.expiration_interval !== undefined) input.expirationInterval = p.expiration_interval;
    if (p.expiration_interval_unit !== undefined) input.expirationIntervalUnit = p.expiration_interval_unit;
    return input;
  });

/** `POST/PUT /products/{id}/price_points[/{id}].json`: body `{"price_point":{...}}`. */
export const productPricePointRequest = defineWireRequest('price_point', productPricePointFields);

/** `POST /products/{id}/price_points/bulk.json`: body `{"price_points":[{...},...]}`, read with `parseWireRequestList`. */
export const productPricePointsBulkRequest = defineWireRequest('price_points', productPricePointFields);

/** A product price point as the service writes it (inside `{"price_point":{...}}`). */
export interface ProductPricePointJson {
  readonly id: number;
  readonly name: string;
  readonly handle: string;
  readonly price_in_cents: number;
  readonly interval: number;
  readonly interval_unit: IntervalUnit;
  readonly trial_price_in_cents: number | null;
  readonly trial_interval: number | null;
  readonly trial_interval_unit: IntervalUnit | null;
  readonly trial_type: string | null;
  readonly introductory_offer: boolean;
  readonly initial_charge_in_cents: number | null;
  readonly initial_charge_after_trial: boolean;
  readonly expiration_interval: number | null;
  readonly expiration_interval_unit: IntervalUnit | null;
  readonly product_id: number;
  readonly archived_at: string | null;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  readonly use_site_exchange_rate: boolean;
  readonly type: PricePointType;
  readonly tax_included: boolean;
  readonly subscription_id: number | null;
}

/** The fields of a product price point, unwrapped. */
export function productPricePointJson(view: ProductPricePointView, context: WireContext): ProductPricePointJson {
  const { pricePoint, terms } = view;
  return {
    id: pricePoint.id,
    name: pricePoint.name,
    handle: pricePoint.handle,
    price_in_cents: terms.priceInCents,
    interval: terms.interval,
    interval_unit: terms.intervalUnit,
    trial_price_in_cents: terms.trialPriceInCents,
    trial_interval: terms.trialInterval,
    trial_interval_unit: terms.trialIntervalUnit,
    // The service's two trial kinds: a card up front or not.
    trial_type: terms.trialInterval === null ? null : terms.requireCreditCard ? 'payment_expected' : 'no_obligation',
    introductory_offer: false,
    initial_charge_in_cents: terms.initialChargeInCents,
    initial_charge_after_trial: terms.initialChargeAfterTrial,
    expiration_interval: terms.expirationInterval,
    expiration_interval_unit: terms.expirationIntervalUnit,
    product_id: pricePoint.productId,
    archived_at: wireTimestamp(pricePoint.archivedAt, context),
    created_at: wireTimestamp(pricePoint.createdAt, context),
    updated_at: wireTimestamp(pricePoint.updatedAt, context),
    // One currency per site: prices are the site's own, never converted.
    use_site_exchange_rate: true,
    type: pricePoint.type,
    tax_included: false,
    subscription_id: null,
  };
}

/** `{"price_point":{...}}`, the body of a price point create, read, update, archive or unarchive. */
export function serializeProductPricePoint(
  view: ProductPricePointView,
  context: WireContext,
): { price_point: ProductPricePointJson } {
  return { price_point: productPricePointJson(view, context) };
}

/** `{"price_points":[...]}`, the body of the price point lists and of a bulk create. */
export function serializeProductPricePoints(
  views: readonly ProductPricePointView[],
  context: WireContext,
): { price_points: ProductPricePointJson[] } {
  return { price_points: views.map((view) => productPricePointJson(view, context)) };
}
