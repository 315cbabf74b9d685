/**
 * Custom prices: a signup's or a migration's `custom_price`, terms given in the request instead of
 * a price point of the product. Like the service, the engine makes them a price point of type
 * `custom` on the product, owned by the one subscription it was made for: its terms are a product
 * version as every price point's are, so the subscription is billed (signup, renewals, proration)
 * by the same code as any other, while the price point stays out of the product's price point
 * lists, cannot be updated, archived or made the default, and no other subscription can be signed
 * up or migrated on it (see `price-point-service.ts`).
 *
 * A custom price is checked when the command is planned (every problem a 422, nothing written) and
 * its price point is written in the transaction that writes the subscription, so a declined
 * payment or any refusal leaves no price point behind.
 */
import { firstFreeHandle, HANDLE_PATTERN, slugify } from '../domain/catalog/handle.js';
import { BillingError, isBillingError, ValidationCollector, validationError } from '../errors.js';
import type {
  ProductPricePointRecord,
  ProductRecord,
  ProductTerms,
  ProductVersionRecord,
  StorageTransaction,
} from '../ports/storage.js';
import { type ProductView, productTerms } from './catalog-service.js';
import { type ProductPricePointInput, withoutOptionalTerms } from './price-point-service.js';

/** The name a custom price point gets when the request gives none. */
export const CUSTOM_PRICE_DEFAULT_NAME = 'Custom';

/**
 * The version number a planned custom price's terms carry until they are written: versions start
 * at 1, so it never equals a stored one (a migration's "already on this version" check stays false).
 */
export const PLANNED_CUSTOM_VERSION = 0;

/** A checked custom price, ready to write. */
export interface CustomPricePlan {
  readonly name: string;
  /** The handle given, or undefined to make one from the name when it is written. */
  readonly handle: string | undefined;
  readonly terms: ProductTerms;
}

/**
 * Checks `input` as the custom price of a subscription to `product`, recording every problem in
 * `errors` with the attribute `custom_price.<field>`: `price_in_cents`, `interval` and
 * `interval_unit` are required, the trial, initial charge and expiration are optional (none unless
 * given, as a new price point starts), a handle must be well formed and free on the product.
 * Product-wide terms (its name on invoices, accounting code, card and tax flags) are the
 * product's. Returns undefined when anything is wrong.
 */
export async function checkCustomPrice(
  tx: StorageTransaction,
  product: ProductView,
  input: ProductPricePointInput,
  errors: ValidationCollector,
): Promise<CustomPricePlan | undefined> {
  const own = new ValidationCollector();
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    errors.add('Custom price: must be an object.', 'custom_price');
    return undefined;
  }
  let name = CUSTOM_PRICE_DEFAULT_NAME;
  if (input.name !== undefined) {
    if (typeof input.name !== 'string') own.add('Name: must be a string.', 'name');
    else if (input.name.trim() !== '') name = input.name.trim();
  }
  let handle: string | undefined;
  if (input.handle !== undefined && input.handle !== '') {
    if (typeof input.handle !== 'string' || !HANDLE_PATTERN.test(input.handle)) {
      own.add(
        'Handle: must start with a letter or number and may only contain lowercase letters, numbers, underscores and dashes.',
        'handle',
      );
    } else if (
      await tx.pricePoints.findProductPricePointByHandle(product.product.siteId, product.product.id, input.handle)
    ) {
      own.add('Handle: must be unique - that value has been taken.', 'handle');
    } else {
      handle = input.handle;
    }
  }
  if (input.priceInCents === undefined) own.add('Price in cents: cannot be blank.', 'price_in_cents');
  if (input.interval === undefined) own.add('Interval: cannot be blank.', 'interval');
  if (input.intervalUnit === undefined) own.add('Interval unit: cannot be blank.', 'interval_unit');
  const { name: _name, handle: _handle, ...termsInput } = input;
  const terms = own.capture(() => productTerms(withoutOptionalTerms(product.version.terms), termsInput));
  for (const detail of detailsOf(own)) {
    errors.add(
      `Custom price: ${detail.message}`,
      detail.attribute === undefined ? 'custom_price' : `custom_price.${detail.attribute}`,
    );
  }
  if (terms === undefined || !own.ok) return undefined;
  return { name, handle, terms };
}

/**
 * The product as a planned custom price bills it: its terms, as a version numbered
 * {@link PLANNED_CUSTOM_VERSION} until {@link writeCustomPricePoint} stores them.
 */
export function plannedCustomView(product: ProductView, plan: CustomPricePlan, now: Date): ProductView {
  const version: ProductVersionRecord = {
    siteId: product.product.siteId,
    productId: product.product.id,
    version: PLANNED_CUSTOM_VERSION,
    terms: plan.terms,
    createdAt: now,
    pricePointId: null,
  };
  const { pricePoint: _pricePoint, ...rest } = product;
  return { ...rest, version };
}

/**
 * Writes a planned custom price as a `custom` price point of `product` with its terms as a new
 * product version, owned by `subscriptionId` (null when the subscription is written after it: then
 * call {@link assignCustomPricePoint}). Without a handle one is made from the name (`custom`,
 * `custom-2`, ... on a signup; `custom-<subscription id>` on a migration); a handle taken since the
 * plan is a 422 when it was given, and a `conflict` (for the caller to retry) when it was made here.
 */
export async function writeCustomPricePoint(
  tx: StorageTransaction,
  product: ProductRecord,
  plan: CustomPricePlan,
  subscriptionId: number | null,
  now: Date,
): Promise<{ pricePoint: ProductPricePointRecord; version: ProductVersionRecord }> {
  const taken = async (h: string) =>
    (await tx.pricePoints.findProductPricePointByHandle(product.siteId, product.id, h)) !== undefined;
  // A migration's subscription is known: its id in the handle keeps concurrent migrations of other
  // subscriptions off it (a conflict there would come after the payment).
  const base = slugify(plan.name) || 'custom';
  const handle =
    plan.handle ?? (await firstFreeHandle(subscriptionId === null ? base : `${base}-${subscriptionId}`, taken));
  try {
    return await tx.pricePoints.insertCustomProductPricePoint(
      {
        siteId: product.siteId,
        productId: product.id,
        name: plan.name,
        handle,
        archivedAt: null,
        createdAt: now,
        updatedAt: now,
        subscriptionId,
      },
      plan.terms,
    );
  } catch (error) {
    if (plan.handle !== undefined && error instanceof BillingError && error.code === 'conflict') {
      throw validationError([
        {
          message: 'Custom price: Handle: must be unique - that value has been taken.',
          attribute: 'custom_price.handle',
        },
      ]);
    }
    throw error;
  }
}

/** Records the subscription a custom price point written before it belongs to. */
export async function assignCustomPricePoint(
  tx: StorageTransaction,
  pricePoint: ProductPricePointRecord,
  subscriptionId: number,
  now: Date,
): Promise<void> {
  const updated = await tx.pricePoints.setProductPricePointSubscription(
    pricePoint.siteId,
    pricePoint.id,
    subscriptionId,
    now,
  );
  if (!updated) throw new BillingError('storage', `Price point ${pricePoint.id} disappeared while it was written.`);
}

function detailsOf(errors: ValidationCollector) {
  try {
    errors.throwIfAny();
  } catch (error) {
    if (isBillingError(error)) return error.details;
    throw error;
  }
  return [];
}
