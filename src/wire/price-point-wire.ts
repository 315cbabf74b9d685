/** The wire format of price points of products and components (requests and serializers). */
import { z } from 'zod';
import { type BillingErrorDetail, validationError } from '../errors.js';
import type { ComponentPricePointRecord, IntervalUnit, PricePointType, PricingScheme } from '../ports/storage.js';
import {
  type ComponentCurrencyPriceInput,
  type CouponCurrencyPriceInput,
  type CurrencyPriceUpdateInput,
  MAX_CURRENCY_PRICES,
  type ProductCurrencyPriceInput,
} from '../services/currency-prices.js';
import type {
  ComponentPricePointAssignment,
  ComponentPricePointInput,
  ComponentPricePointView,
  ProductPricePointInput,
  ProductPricePointView,
} from '../services/price-point-service.js';
import { wirePrice } from './serialize-component.js';
import { isGiven } from './subscription-request.js';
import { type WireContext, wireTimestamp } from './wire-context.js';
import { defineWireRequest, isPlainObject } from './wire-request.js';
import { wireBoolean, wireCents, wireDecimal, wireInteger, wireIntervalUnit, wireText } from './wire-scalars.js';

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
    subscription_id: pricePoint.subscriptionId ?? null,
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

/** A field the engine cannot honour on a component price point: refused (422) when given, rather than ignored. */
const unsupportedPricePointField = z
  .unknown()
  .optional()
  .refine((v) => !isGiven(v), { message: 'is not supported by this server yet.' });

// Bracket values pass through unchanged: the engine's pricing parser has the messages for them.
// `id` is read and not used (brackets have no ids here: a `prices` list replaces them all), and a
// bracket marked `_destroy` / `destroy` is left out of the new list.
const componentPriceBracket = z
  .object(
    {
      id: z.unknown().optional(),
      starting_quantity: z.unknown().optional(),
      ending_quantity: z.unknown().optional(),
      unit_price: z.unknown().optional(),
      _destroy: wireBoolean.nullish(),
      destroy: wireBoolean.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform((b) => ({
    destroyed: b._destroy === true || b.destroy === true,
    bracket: { startingQuantity: b.starting_quantity, endingQuantity: b.ending_quantity, unitPrice: b.unit_price },
  }));

/**
 * The fields of `{"price_point":{...}}` of a component, read into a {@link ComponentPricePointInput}:
 * `name`, `handle`, `pricing_scheme`, `prices[]` (`{starting_quantity, ending_quantity,
 * unit_price}`) or the per-unit shortcut `unit_price`. `use_site_exchange_rate` is read and ignored
 * (a site has one currency); `tax_included: true` and a price point's own `interval` /
 * `interval_unit` (the service's multi-frequency billing) are refused: the engine has neither.
 */
export const componentPricePointFields = z
  .object(
    {
      name: wireText.nullish(),
      handle: wireText.nullish(),
      pricing_scheme: wireText.nullish(),
      unit_price: wireDecimal.nullish(),
      prices: z.array(componentPriceBracket, { error: 'must be a list of price brackets.' }).nullish(),
      use_site_exchange_rate: wireBoolean.nullish(),
      tax_included: wireBoolean.nullish().refine((v) => v !== true, {
        message: 'tax-inclusive pricing is not supported by this server yet.',
      }),
      interval: unsupportedPricePointField,
      interval_unit: unsupportedPricePointField,
    },
    { error: 'must be an object.' },
  )
  .transform((p): ComponentPricePointInput => {
    const input: { -readonly [K in keyof ComponentPricePointInput]: ComponentPricePointInput[K] } = {};
    if (p.name != null) input.name = p.name;
    if (p.handle != null) input.handle = p.handle;
    // The engine checks the scheme against its closed list and answers 422 for any other value.
    if (p.pricing_scheme != null) input.pricingScheme = p.pricing_scheme as PricingScheme;
    if (p.unit_price != null) input.unitPrice = p.unit_price;
    if (p.prices != null) input.prices = p.prices.filter((b) => !b.destroyed).map((b) => b.bracket);
    return input;
  });

/** `POST/PUT /components/{id}/price_points[/{id}].json`: body `{"price_point":{...}}`. */
export const componentPricePointRequest = defineWireRequest('price_point', componentPricePointFields);

/** `POST /components/{id}/price_points/bulk.json`: body `{"price_points":[{...},...]}`, read with `parseWireRequestList`. */
export const componentPricePointsBulkRequest = defineWireRequest('price_points', componentPricePointFields);

/** One bracket of a component price point as the service writes it. */
export interface ComponentPricePointPriceJson {
  readonly component_id: number;
  readonly price_point_id: number;
  readonly starting_quantity: number;
  readonly ending_quantity: number | null;
  readonly unit_price: string;
}

/** A component price point as the service writes it (inside `{"price_point":{...}}`). */
export interface ComponentPricePointJson {
  readonly id: number;
  readonly type: PricePointType;
  readonly default: boolean;
  readonly name: string;
  readonly handle: string;
  readonly pricing_scheme: PricingScheme;
  readonly component_id: number;
  readonly prices: readonly ComponentPricePointPriceJson[];
  readonly archived_at: string | null;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  readonly use_site_exchange_rate: boolean;
  readonly tax_included: boolean;
  readonly interval: null;
  readonly interval_unit: null;
  readonly currency_prices: readonly never[];
}

/** The fields of a component price point, unwrapped. */
export function componentPricePointJson(view: ComponentPricePointView, context: WireContext): ComponentPricePointJson {
  const { pricePoint, version } = view;
  return {
    id: pricePoint.id,
    type: pricePoint.type,
    default: pricePoint.type === 'default',
    name: pricePoint.name,
    handle: pricePoint.handle,
    pricing_scheme: version.pricing.scheme,
    component_id: pricePoint.componentId,
    prices: version.pricing.brackets.map((bracket) => ({
      component_id: pricePoint.componentId,
      price_point_id: pricePoint.id,
      starting_quantity: bracket.startingQuantity,
      ending_quantity: bracket.endingQuantity,
      unit_price: wirePrice(bracket.unitPrice),
    })),
    archived_at: wireTimestamp(pricePoint.archivedAt, context),
    created_at: wireTimestamp(pricePoint.createdAt, context),
    updated_at: wireTimestamp(pricePoint.updatedAt, context),
    // One currency per site: prices are the site's own, never converted.
    use_site_exchange_rate: true,
    tax_included: false,
    // A component price point bills with its product here; it has no interval of its own.
    interval: null,
    interval_unit: null,
    currency_prices: [],
  };
}

/** `{"price_point":{...}}`, the body of a component price point create, read, update, archive or unarchive. */
export function serializeComponentPricePoint(
  view: ComponentPricePointView,
  context: WireContext,
): { price_point: ComponentPricePointJson } {
  return { price_point: componentPricePointJson(view, context) };
}

/** `{"price_points":[...]}`, the body of the component price point lists and of a bulk create. */
export function serializeComponentPricePoints(
  views: readonly ComponentPricePointView[],
  context: WireContext,
): { price_points: ComponentPricePointJson[] } {
  return { price_points: views.map((view) => componentPricePointJson(view, context)) };
}

/**
 * The price point fields of a component read (`GET /components/{id}.json` and its kin): the
 * default price point's id and name, and how many live price points the component has.
 */
export function componentPricePointFieldsJson(
  defaultPricePoint: ComponentPricePointRecord | undefined,
  pricePointCount: number,
): { default_price_point_id: number | null; default_price_point_name?: string; price_point_count: number } {
  return {
    default_price_point_id: defaultPricePoint?.id ?? null,
    ...(defaultPricePoint === undefined ? {} : { default_price_point_name: defaultPricePoint.name }),
    price_point_count: pricePointCount,
  };
}

/** The price point fields of a subscription's component: the price point of the version it is billed at. */
export function subscriptionComponentPricePointJson(pricePoint: ComponentPricePointRecord | undefined): {
  price_point_id: number | null;
  price_point_handle: string | null;
  price_point_type: PricePointType | null;
  price_point_name: string | null;
} {
  return {
    price_point_id: pricePoint?.id ?? null,
    price_point_handle: pricePoint?.handle ?? null,
    price_point_type: pricePoint?.type ?? null,
    price_point_name: pricePoint?.name ?? null,
  };
}

/**
 * Reads `{"components":[{"component_id":1,"price_point":"handle-or-id"},...]}`, the body of `POST
 * /subscriptions/{id}/price_points.json`. A `price_point` of digits (number or string) is an id;
 * any other string is a handle. Problems are answered in the endpoint's error shape
 * (`{"errors":[{"component_id":N,"price_point":X,"message":"..."}]}`), every one at once.
 */
export function parseComponentPricePointAssignments(body: unknown): ComponentPricePointAssignment[] {
  const list = isPlainObject(body) ? body.components : undefined;
  if (!Array.isArray(list) || list.length === 0) {
    throw validationError(
      [
        {
          message:
            'Components: must be a non-empty list like {"components":[{"component_id":1,"price_point":"handle"}]}.',
          attribute: 'components',
        },
      ],
      'objects',
    );
  }
  const problems: BillingErrorDetail[] = [];
  const assignments: ComponentPricePointAssignment[] = [];
  for (const item of list) {
    const entry = isPlainObject(item) ? item : {};
    const rawId = entry.component_id;
    const componentId =
      typeof rawId === 'number' ? rawId : typeof rawId === 'string' && /^\d+$/.test(rawId) ? Number(rawId) : NaN;
    const rawPricePoint = entry.price_point;
    // The error objects name what the entry sent, as far as it is a number or text.
    const extra: Record<string, string | number> = {};
    if (typeof rawId === 'number' || typeof rawId === 'string')
      extra.component_id = Number.isSafeInteger(componentId) ? componentId : rawId;
    if (typeof rawPricePoint === 'number' || typeof rawPricePoint === 'string') extra.price_point = rawPricePoint;
    if (!Number.isSafeInteger(componentId) || componentId < 1) {
      problems.push({ message: 'Component: cannot be blank.', attribute: 'component_id', extra });
      continue;
    }
    if (typeof rawPricePoint === 'number' && Number.isSafeInteger(rawPricePoint) && rawPricePoint > 0) {
      assignments.push({ componentId, pricePoint: rawPricePoint });
    } else if (typeof rawPricePoint === 'string' && rawPricePoint.trim() !== '') {
      assignments.push({ componentId, pricePoint: rawPricePoint.trim() });
    } else {
      problems.push({ message: 'Price point: cannot be blank.', attribute: 'price_point', extra });
    }
  }
  if (problems.length > 0) throw validationError(problems, 'objects');
  return assignments;
}

/**
 * Takes the price point (`price_point_id`, and `price_point_handle` when a client sends it) out of
 * one allocation object, for the engine to read; the rest is read as any allocation is.
 */
export function takeAllocationPricePoint(allocation: unknown): {
  readonly allocation: unknown;
  readonly pricePoint: { pricePointId?: number | string; pricePointHandle?: string };
} {
  if (!isPlainObject(allocation)) return { allocation, pricePoint: {} };
  const { price_point_id: id, price_point_handle: handle, ...rest } = allocation;
  return {
    allocation: rest,
    pricePoint: {
      ...(id === undefined || id === null || id === '' ? {} : { pricePointId: id as number | string }),
      ...(handle === undefined || handle === null || handle === '' ? {} : { pricePointHandle: handle as string }),
    },
  };
}

/**
 * The entries of `{"currency_prices":[{...},...]}`, the body of every currency-price request
 * (product and component price points, coupons): each object's fields in the engine's names, values
 * passed on as sent for the engine to check with its messages. A missing or non-list
 * `currency_prices` reads as an empty list, which the engine refuses; a non-object entry is passed
 * on as it is, for the engine to refuse. Only one entry past the engine's limit is read, which is
 * enough for the engine to refuse the list.
 */
function currencyPriceEntries<T>(body: unknown, read: (entry: Record<string, unknown>) => T): T[] {
  const list = isPlainObject(body) ? body.currency_prices : undefined;
  if (!Array.isArray(list)) return [];
  return list.slice(0, MAX_CURRENCY_PRICES + 1).map((entry) => (isPlainObject(entry) ? read(entry) : (entry as T)));
}

/** `POST /product_price_points/{id}/currency_prices.json`: `{"currency_prices":[{"currency","price","role"}]}`. */
export function parseProductCurrencyPrices(body: unknown): ProductCurrencyPriceInput[] {
  return currencyPriceEntries(
    body,
    (e) => ({ currency: e.currency, price: e.price, role: e.role }) as ProductCurrencyPriceInput,
  );
}

/** `POST /price_points/{id}/currency_prices.json`: `{"currency_prices":[{"currency","price","price_id"}]}`. */
export function parseComponentCurrencyPrices(body: unknown): ComponentCurrencyPriceInput[] {
  return currencyPriceEntries(
    body,
    (e) => ({ currency: e.currency, price: e.price, priceId: e.price_id }) as ComponentCurrencyPriceInput,
  );
}

/** `PUT /coupons/{id}/currency_prices.json`: `{"currency_prices":[{"currency","price"}]}`. */
export function parseCouponCurrencyPrices(body: unknown): CouponCurrencyPriceInput[] {
  return currencyPriceEntries(body, (e) => ({ currency: e.currency, price: e.price }) as CouponCurrencyPriceInput);
}

/** The `PUT` of a price point's currency prices: `{"currency_prices":[{"id","price"}]}`. */
export function parseCurrencyPriceUpdates(body: unknown): CurrencyPriceUpdateInput[] {
  return currencyPriceEntries(body, (e) => ({ id: e.id, price: e.price }) as CurrencyPriceUpdateInput);
}

/**
 * A price point or coupon body with `currency_prices`, as reads answer when asked with
 * `currency_prices=true` (or `include=currency_prices` on the site-wide lists): always empty, since
 * a site has one currency and it is the record's primary pricing.
 */
export function withCurrencyPrices<T extends object>(json: T): T & { readonly currency_prices: readonly never[] } {
  return { ...json, currency_prices: [] };
}
