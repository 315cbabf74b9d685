import type { IntervalUnit, ProductFamilyRecord } from '../ports/storage.js';
import type { ProductView } from '../services/catalog-service.js';
import { type ProductFamilyJson, productFamilyJson } from './serialize-product-family.js';
import { type WireContext, wireTimestamp } from './wire-context.js';

/**
 * A product as the service writes it (inside `{"product":{...}}`): the terms of one version with
 * integer `*_in_cents`, `interval_unit` `month`/`day`, and the version number under both names
 * clients read (`version_number`, `product_version`).
 */
export interface ProductJson {
  readonly id: number;
  readonly name: string;
  readonly handle: string;
  readonly description: string | null;
  readonly accounting_code: string | null;
  readonly price_in_cents: number;
  readonly interval: number;
  readonly interval_unit: IntervalUnit;
  readonly initial_charge_in_cents: number | null;
  readonly initial_charge_after_trial: boolean;
  readonly trial_price_in_cents: number | null;
  readonly trial_interval: number | null;
  readonly trial_interval_unit: IntervalUnit | null;
  readonly expiration_interval: number | null;
  readonly expiration_interval_unit: IntervalUnit | null;
  readonly request_credit_card: boolean;
  readonly require_credit_card: boolean;
  readonly taxable: boolean;
  readonly version_number: number;
  readonly product_version: number;
  readonly archived_at: string | null;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  /** The full family when the caller has it, else just its id. */
  readonly product_family: ProductFamilyJson | { readonly id: number };
  /** The price point whose terms these are, when the view has it. */
  readonly product_price_point_id?: number;
  readonly product_price_point_handle?: string;
  readonly product_price_point_name?: string;
  /** The product's default price point, when the view has it. */
  readonly default_product_price_point_id?: number;
}

/**
 * The fields of a product, unwrapped (also nested in a subscription, where `view.version` is the
 * version the subscriber is pinned to rather than the current one). Pass the product's family to
 * have it written in full.
 */
export function productJson(view: ProductView, context: WireContext, family?: ProductFamilyRecord): ProductJson {
  const { product, version } = view;
  const terms = version.terms;
  return {
    id: product.id,
    name: terms.name,
    handle: product.handle,
    description: terms.description,
    accounting_code: terms.accountingCode,
    price_in_cents: terms.priceInCents,
    interval: terms.interval,
    interval_unit: terms.intervalUnit,
    initial_charge_in_cents: terms.initialChargeInCents,
    initial_charge_after_trial: terms.initialChargeAfterTrial,
    trial_price_in_cents: terms.trialPriceInCents,
    trial_interval: terms.trialInterval,
    trial_interval_unit: terms.trialIntervalUnit,
    expiration_interval: terms.expirationInterval,
    expiration_interval_unit: terms.expirationIntervalUnit,
    request_credit_card: terms.requestCreditCard,
    require_credit_card: terms.requireCreditCard,
    taxable: terms.taxable,
    version_number: version.version,
    product_version: version.version,
    archived_at: wireTimestamp(product.archivedAt, context),
    created_at: wireTimestamp(product.createdAt, context),
    updated_at: wireTimestamp(product.updatedAt, context),
    product_family:
      family !== undefined && family.id === product.familyId
        ? productFamilyJson(family, context)
        : { id: product.familyId },
    ...(view.pricePoint === undefined
      ? {}
      : {
          product_price_point_id: view.pricePoint.id,
          product_price_point_handle: view.pricePoint.handle,
          product_price_point_name: view.pricePoint.name,
        }),
    ...(view.defaultPricePointId === undefined ? {} : { default_product_price_point_id: view.defaultPricePointId }),
  };
}

/** `{"product":{...}}`, the body of a product create, read or update. */
export function serializeProduct(
  view: ProductView,
  context: WireContext,
  family?: ProductFamilyRecord,
): { product: ProductJson } {
  return { product: productJson(view, context, family) };
}
