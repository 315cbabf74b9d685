import { normaliseCouponCode } from '../domain/catalog/coupon-code.js';
import { stackingErrors } from '../domain/catalog/coupon-discount.js';
import { HANDLE_PATTERN } from '../domain/catalog/handle.js';
import { BillingError, invalid, isBillingError, notFound, ValidationCollector } from '../errors.js';
import type {
  ComponentKind,
  CouponRecord,
  OfferItemRecord,
  OfferRecord,
  ProductRecord,
  StorageTransaction,
} from '../ports/storage.js';
import { loadProductVersion } from './catalog-service.js';
import { type CommandDeps, runCommand } from './command-runner.js';
import type { SignupComponentInput } from './component-billing.js';
import { clampPage } from './customer-service.js';
import { findComponentPricePointRef, resolveSignupVersion } from './price-point-service.js';
import { runRead } from './read-runner.js';
import { loadSite } from './site-lookup.js';

/** One component of {@link OfferInput}. */
export interface OfferComponentInput {
  readonly componentId?: unknown;
  /** The component's price point (an id); its default when omitted. */
  readonly pricePointId?: unknown;
  /** Whole units at signup (0 or 1 for on/off, a starting balance for metered); 0 when omitted. */
  readonly startingQuantity?: unknown;
}

/** Input of {@link OfferService.create} (`{"offer":{...}}`). Fields are checked here, so any value may arrive. */
export interface OfferInput {
  readonly name?: unknown;
  /** Required; unique per site, a handle like any other (lower case letters, digits, `_` and `-`). */
  readonly handle?: unknown;
  readonly description?: unknown;
  readonly productId?: unknown;
  /** A price point of the product; the product's default (at signup time) when omitted. */
  readonly productPricePointId?: unknown;
  readonly components?: readonly OfferComponentInput[];
  /** Coupon codes of the site, each of the product's family. */
  readonly coupons?: readonly unknown[];
}

/** A page of the offer list; archived offers only when asked for. */
export interface ListOffersOptions {
  readonly page?: number;
  readonly perPage?: number;
  readonly includeArchived?: boolean;
}

/** One component of an offer as a read shows it. */
export interface OfferItemView {
  readonly componentId: number;
  readonly componentName: string;
  readonly componentKind: ComponentKind;
  /** The price point the offer names, or the component's default one when it names none. */
  readonly pricePointId: number | null;
  readonly pricePointName: string | null;
  readonly startingQuantity: number;
}

/** One coupon of an offer as a read shows it. */
export interface OfferDiscountView {
  readonly couponId: number;
  readonly couponCode: string;
  readonly couponName: string;
}

/** An offer with the names of what it packages, for reads. */
export interface OfferView {
  readonly offer: OfferRecord;
  readonly productFamilyId: number;
  readonly productFamilyName: string;
  readonly productName: string;
  readonly productHandle: string;
  /** The price point the offer names, or the product's default one when it names none. */
  readonly productPricePointId: number | null;
  readonly productPricePointName: string | null;
  /** The price of the product at that price point (its current terms). */
  readonly productPriceInCents: number;
  readonly items: readonly OfferItemView[];
  readonly discounts: readonly OfferDiscountView[];
}

/** The engine methods a site handle exposes. */
export const OFFER_METHODS = ['create', 'list', 'get', 'archive', 'unarchive'] as const;

const HANDLE_MESSAGE =
  'API Handle: must start with a letter or number and may only contain lowercase letters, numbers, underscores and dashes.';
const HANDLE_TAKEN = 'API Handle: must be unique - that value has been taken.';
const MAX_NAME_LENGTH = 255;
const MAX_DESCRIPTION_LENGTH = 10_000;

/**
 * Offers of a site: a product (at one of its price points), components at starting quantities and
 * coupons, packaged under a name and handle. A signup naming an offer (`offer_id`) signs up to
 * exactly that (see {@link offerSignup}). Offers are catalog records: they cannot be changed
 * or deleted, only archived (no new signups) and unarchived; a data clear keeps them.
 */
export class OfferService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /** Creates an offer; 422 with every problem of the input, nothing written then. */
  create(subdomain: string, input: OfferInput): Promise<OfferView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const errors = new ValidationCollector();
      const name = readName(input.name, errors);
      const handle = readHandle(input.handle, errors);
      if (handle !== undefined && (await tx.offers.findByHandle(site.id, handle)) !== undefined)
        errors.add(HANDLE_TAKEN, 'handle');
      const description = readDescription(input.description, errors);
      const product = await readProduct(tx, site.id, input.productId, errors);
      const productPricePointId =
        product === undefined ? undefined : await readProductPricePoint(tx, site.id, product, input, errors);
      const items = await readComponents(tx, site.id, product, input.components, errors);
      const coupons = await readCoupons(tx, site.id, product, input.coupons, errors);
      errors.throwIfAny();
      let created: OfferRecord;
      try {
        created = await tx.offers.insert({
          siteId: site.id,
          name: name as string,
          handle: handle as string,
          description: description ?? null,
          productId: (product as ProductRecord).id,
          productPricePointId: productPricePointId ?? null,
          items: items ?? [],
          couponIds: (coupons ?? []).map((c) => c.id),
          archivedAt: null,
          createdAt: now,
          updatedAt: now,
        });
      } catch (error) {
        if (isBillingError(error, 'conflict')) throw invalid(HANDLE_TAKEN, 'handle');
        throw error;
      }
      return offerView(tx, created);
    });
  }

  /** One page of the site's offers by id; archived ones only with `includeArchived`. */
  list(subdomain: string, options: ListOffersOptions = {}): Promise<OfferView[]> {
    const { page, perPage } = clampPage(options.page, options.perPage);
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const offers = await tx.offers.list(site.id, {
        includeArchived: options.includeArchived === true,
        offset: (page - 1) * perPage,
        limit: perPage,
      });
      const views: OfferView[] = [];
      for (const offer of offers) views.push(await offerView(tx, offer));
      return views;
    });
  }

  /** An offer by id, archived or not; `not_found` when the site has none with that id. */
  get(subdomain: string, id: number): Promise<OfferView> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => offerView(tx, await loadOffer(tx, site.id, id)));
  }

  /** Archives an offer: no new signups with it; it stays readable. Archiving again keeps the first time. */
  archive(subdomain: string, id: number): Promise<OfferView> {
    return this.#setArchived(subdomain, id, true);
  }

  /** Makes an archived offer usable for signups again. */
  unarchive(subdomain: string, id: number): Promise<OfferView> {
    return this.#setArchived(subdomain, id, false);
  }

  #setArchived(subdomain: string, id: number, archived: boolean): Promise<OfferView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const offer = await loadOffer(tx, site.id, id);
      if ((offer.archivedAt !== null) === archived) return offerView(tx, offer);
      const updated = await tx.offers.setArchived(site.id, offer.id, archived ? now : null, now);
      if (!updated) throw notFound('Offer', id);
      return offerView(tx, updated);
    });
  }
}

/**
 * The key of a subscription's data holding the id of the offer it was signed up with (absent for a
 * signup without one); the API shows it as `offer_id`. A later migration keeps it: it records
 * where the subscription came from, not what it is on now.
 */
export const OFFER_ID_DATA_KEY = 'offerId';

/** An offer by id; `not_found` when missing. */
export async function loadOffer(tx: StorageTransaction, siteId: number, id: number): Promise<OfferRecord> {
  const offer = await tx.offers.findById(siteId, id);
  if (!offer) throw notFound('Offer', id);
  return offer;
}

/**
 * The fields of a signup (`CreateSubscriptionInput`) an offer sets or adds to; declared here so
 * that this module does not import the subscription service, which imports it.
 */
export interface OfferSignupFields {
  /** The offer: its id, or `handle:<handle>`. */
  readonly offerId?: number | string;
  readonly productId?: number;
  readonly productHandle?: string;
  readonly productPricePointId?: number;
  readonly productPricePointHandle?: string;
  readonly customPrice?: unknown;
  readonly couponCode?: string;
  readonly couponCodes?: readonly string[];
  readonly components?: readonly SignupComponentInput[];
}

/** The signup fields an offer sets: refused beside `offer_id`, whose offer decides them. */
const PRODUCT_FIELDS: readonly [keyof OfferSignupFields, string, string][] = [
  ['productId', 'product_id', 'Product id'],
  ['productHandle', 'product_handle', 'Product handle'],
  ['productPricePointId', 'product_price_point_id', 'Product price point id'],
  ['productPricePointHandle', 'product_price_point_handle', 'Product price point handle'],
  ['customPrice', 'custom_price', 'Custom price'],
];

/**
 * A signup naming an offer (`offerId`: an id, or `handle:<handle>`), as the signup it stands for:
 * the offer's product at its price point, its components at their starting quantities and price
 * points, and its coupons. Components and coupon codes given beside the offer are added to its
 * own (the explicit components first, so that their `components[i]` attributes stay those of the
 * request); a component the offer already has is refused, as are the product fields (product id
 * or handle, price point, custom price), which the offer decides. An unknown or archived offer is
 * a 422 on `offer_id`. Everything else of the offer (a coupon that has since expired, an archived
 * component) is checked by the signup as if it had been given explicitly. Answers that signup and
 * the id of the offer (named by id or by handle), which the subscription records
 * ({@link OFFER_ID_DATA_KEY}); null without `offerId`.
 */
export async function offerSignup<T extends OfferSignupFields>(
  tx: StorageTransaction,
  siteId: number,
  input: T,
): Promise<{ readonly input: T; readonly offerId: number | null }> {
  const reference = input.offerId;
  if (reference === undefined) return { input, offerId: null };
  const offer = await findOfferRef(tx, siteId, reference);
  if (offer === undefined) throw invalid(`Offer: '${String(reference)}' does not exist for this site.`, 'offer_id');
  if (offer.archivedAt !== null) throw invalid('Offer: has been archived and cannot be subscribed to.', 'offer_id');
  const errors = new ValidationCollector();
  for (const [key, attribute, label] of PRODUCT_FIELDS) {
    if (input[key] !== undefined)
      errors.add(`${label}: cannot be given with an offer, which sets the product.`, attribute);
  }
  const offered = new Set(offer.items.map((item) => item.componentId));
  for (const [index, component] of (input.components ?? []).entries()) {
    const ref = component.componentId ?? component.handle;
    const found =
      typeof ref === 'number'
        ? await tx.components.findById(siteId, ref)
        : typeof ref === 'string'
          ? await tx.components.findByHandle(siteId, ref)
          : undefined;
    if (found !== undefined && offered.has(found.id))
      errors.add(
        `Component: '${String(ref)}' is part of the offer, which sets its quantity.`,
        `components[${index}].component_id`,
      );
  }
  errors.throwIfAny();
  const codes: string[] = [];
  for (const couponId of offer.couponIds) {
    const coupon = await tx.coupons.findById(siteId, couponId);
    if (coupon === undefined) throw invalid(`Offer: its coupon ${couponId} no longer exists.`, 'offer_id');
    codes.push(coupon.code);
  }
  const seen = new Set(codes.map((c) => c.toUpperCase()));
  for (const code of [...(input.couponCode === undefined ? [] : [input.couponCode]), ...(input.couponCodes ?? [])]) {
    if (seen.has(code.trim().toUpperCase())) continue;
    seen.add(code.trim().toUpperCase());
    codes.push(code);
  }
  const components: SignupComponentInput[] = [
    ...(input.components ?? []),
    ...offer.items.map(
      (item): SignupComponentInput => ({
        componentId: item.componentId,
        quantity: item.startingQuantity,
        ...(item.pricePointId === null ? {} : { pricePoint: item.pricePointId }),
      }),
    ),
  ];
  const { offerId: _offer, couponCode: _code, couponCodes: _codes, components: _components, ...rest } = input;
  const [couponCode, ...couponCodes] = codes;
  const signup: OfferSignupFields = {
    ...rest,
    productId: offer.productId,
    ...(offer.productPricePointId === null ? {} : { productPricePointId: offer.productPricePointId }),
    ...(components.length === 0 ? {} : { components }),
    ...(couponCode === undefined ? {} : { couponCode }),
    ...(couponCodes.length === 0 ? {} : { couponCodes }),
  };
  // The caller's other fields are kept as they were (`rest`); only the offer's are set.
  return { input: signup as T, offerId: offer.id };
}

/** An offer by id, or by handle (`handle:<handle>`, or a bare handle); undefined when missing. */
async function findOfferRef(
  tx: StorageTransaction,
  siteId: number,
  reference: number | string,
): Promise<OfferRecord | undefined> {
  if (typeof reference === 'number')
    return Number.isSafeInteger(reference) && reference > 0 ? tx.offers.findById(siteId, reference) : undefined;
  const text = reference.trim();
  if (/^\d+$/.test(text)) return tx.offers.findById(siteId, Number(text));
  const handle = text.startsWith('handle:') ? text.slice('handle:'.length) : text;
  return handle === '' ? undefined : tx.offers.findByHandle(siteId, handle);
}

/** An offer with the names of its product, price points, components and coupons. */
export async function offerView(tx: StorageTransaction, offer: OfferRecord): Promise<OfferView> {
  const siteId = offer.siteId;
  const product = await tx.catalog.findProduct(siteId, offer.productId);
  if (!product)
    throw new BillingError('storage', `Offer ${offer.id} names product ${offer.productId}, which is missing.`);
  const family = await tx.catalog.findFamily(siteId, product.familyId);
  const pricePoint =
    offer.productPricePointId === null
      ? await tx.pricePoints.findDefaultProductPricePoint(siteId, product.id)
      : await tx.pricePoints.findProductPricePoint(siteId, offer.productPricePointId);
  const version = await loadProductVersion(tx, siteId, product.id, pricePoint?.version ?? product.currentVersion);
  const items: OfferItemView[] = [];
  for (const item of offer.items) {
    const component = await tx.components.findById(siteId, item.componentId);
    const componentPricePoint =
      item.pricePointId === null
        ? await tx.pricePoints.findDefaultComponentPricePoint(siteId, item.componentId)
        : await tx.pricePoints.findComponentPricePoint(siteId, item.pricePointId);
    items.push({
      componentId: item.componentId,
      componentName: component?.name ?? '',
      componentKind: component?.kind ?? 'quantity_based_component',
      pricePointId: componentPricePoint?.id ?? item.pricePointId,
      pricePointName: componentPricePoint?.name ?? null,
      startingQuantity: item.startingQuantity,
    });
  }
  const discounts: OfferDiscountView[] = [];
  for (const couponId of offer.couponIds) {
    const coupon = await tx.coupons.findById(siteId, couponId);
    if (coupon) discounts.push({ couponId, couponCode: coupon.code, couponName: coupon.name });
  }
  return {
    offer,
    productFamilyId: product.familyId,
    productFamilyName: family?.name ?? '',
    productName: version.version.terms.name,
    productHandle: product.handle,
    productPricePointId: pricePoint?.id ?? offer.productPricePointId,
    productPricePointName: pricePoint?.name ?? null,
    productPriceInCents: version.version.terms.priceInCents,
    items,
    discounts,
  };
}

function readName(value: unknown, errors: ValidationCollector): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') {
    errors.add('Name: cannot be blank.', 'name');
    return undefined;
  }
  if (value.trim().length > MAX_NAME_LENGTH) {
    errors.add(`Name: is too long (maximum is ${MAX_NAME_LENGTH} characters).`, 'name');
    return undefined;
  }
  return value.trim();
}

function readHandle(value: unknown, errors: ValidationCollector): string | undefined {
  if (value === undefined || value === null || value === '') {
    errors.add('API Handle: cannot be blank.', 'handle');
    return undefined;
  }
  if (typeof value !== 'string' || !HANDLE_PATTERN.test(value)) {
    errors.add(HANDLE_MESSAGE, 'handle');
    return undefined;
  }
  return value;
}

function readDescription(value: unknown, errors: ValidationCollector): string | null | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    errors.add('Description: must be a string.', 'description');
    return undefined;
  }
  if (value.length > MAX_DESCRIPTION_LENGTH) {
    errors.add(`Description: is too long (maximum is ${MAX_DESCRIPTION_LENGTH} characters).`, 'description');
    return undefined;
  }
  return value === '' ? null : value;
}

/** A positive whole id, or undefined. */
function idOf(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

async function readProduct(
  tx: StorageTransaction,
  siteId: number,
  value: unknown,
  errors: ValidationCollector,
): Promise<ProductRecord | undefined> {
  if (value === undefined || value === null || value === '') {
    errors.add('Product: must be specified.', 'product_id');
    return undefined;
  }
  const id = idOf(value);
  const product = id === undefined ? undefined : await tx.catalog.findProduct(siteId, id);
  if (product === undefined) {
    errors.add(`Product with id '${String(value)}' does not exist for this site.`, 'product_id');
    return undefined;
  }
  if (product.archivedAt !== null) {
    errors.add('Product: has been archived and cannot be offered.', 'product_id');
    return undefined;
  }
  return product;
}

/** The offer's product price point id (null for the default), checked as a signup checks it. */
async function readProductPricePoint(
  tx: StorageTransaction,
  siteId: number,
  product: ProductRecord,
  input: OfferInput,
  errors: ValidationCollector,
): Promise<number | null | undefined> {
  const value = input.productPricePointId;
  if (value === undefined || value === null || value === '') return null;
  const id = idOf(value);
  if (id === undefined) {
    errors.add(
      `Product price point: ${String(value)} is not a price point of product ${product.handle}.`,
      'product_price_point_id',
    );
    return undefined;
  }
  try {
    await resolveSignupVersion(tx, siteId, product, { pricePointId: id, pricePointHandle: null });
    return id;
  } catch (error) {
    if (!isBillingError(error, 'validation')) throw error;
    for (const detail of error.details) errors.add(detail.message, detail.attribute);
    return undefined;
  }
}

async function readComponents(
  tx: StorageTransaction,
  siteId: number,
  product: ProductRecord | undefined,
  value: unknown,
  errors: ValidationCollector,
): Promise<OfferItemRecord[] | undefined> {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    errors.add('Components: must be a list of components.', 'components');
    return undefined;
  }
  const items: OfferItemRecord[] = [];
  const seen = new Set<number>();
  for (const [index, raw] of value.entries()) {
    const at = `components[${index}]`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      errors.add('Component: must be an object.', at);
      continue;
    }
    const entry = raw as OfferComponentInput;
    if (entry.componentId === undefined || entry.componentId === null || entry.componentId === '') {
      errors.add('Component: cannot be blank.', `${at}.component_id`);
      continue;
    }
    const componentId = idOf(entry.componentId);
    const component = componentId === undefined ? undefined : await tx.components.findById(siteId, componentId);
    if (component === undefined || (product !== undefined && component.familyId !== product.familyId)) {
      errors.add(`Component: '${String(entry.componentId)}' does not exist.`, `${at}.component_id`);
      continue;
    }
    if (component.archivedAt !== null) {
      errors.add(`Component: '${String(entry.componentId)}' has been archived.`, `${at}.component_id`);
      continue;
    }
    if (seen.has(component.id)) {
      errors.add(`Component: '${String(entry.componentId)}' is given more than once.`, `${at}.component_id`);
      continue;
    }
    seen.add(component.id);
    let pricePointId: number | null = null;
    if (entry.pricePointId !== undefined && entry.pricePointId !== null && entry.pricePointId !== '') {
      const id = idOf(entry.pricePointId);
      const pricePoint = id === undefined ? undefined : await findComponentPricePointRef(tx, siteId, component.id, id);
      if (pricePoint === undefined) {
        errors.add(`Price point: '${String(entry.pricePointId)}' does not exist.`, `${at}.price_point_id`);
        continue;
      }
      if (pricePoint.archivedAt !== null) {
        errors.add(`Price point: '${String(entry.pricePointId)}' has been archived.`, `${at}.price_point_id`);
        continue;
      }
      pricePointId = pricePoint.id;
    }
    const quantity = readStartingQuantity(entry.startingQuantity, component.kind, `${at}.starting_quantity`, errors);
    if (quantity === undefined) continue;
    items.push({ componentId: component.id, pricePointId, startingQuantity: quantity });
  }
  return items;
}

function readStartingQuantity(
  value: unknown,
  kind: ComponentKind,
  attribute: string,
  errors: ValidationCollector,
): number | undefined {
  if (value === undefined || value === null || value === '') return 0;
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    errors.add('Starting quantity: must be a whole number, 0 or more.', attribute);
    return undefined;
  }
  if (kind === 'on_off_component' && n > 1) {
    errors.add('Starting quantity: an on/off component takes 0 or 1.', attribute);
    return undefined;
  }
  return n;
}

async function readCoupons(
  tx: StorageTransaction,
  siteId: number,
  product: ProductRecord | undefined,
  value: unknown,
  errors: ValidationCollector,
): Promise<CouponRecord[] | undefined> {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    errors.add('Coupons: must be a list of coupon codes.', 'coupons');
    return undefined;
  }
  const coupons: CouponRecord[] = [];
  for (const [index, code] of value.entries()) {
    const at = `coupons[${index}]`;
    if (typeof code !== 'string' || code.trim() === '') {
      errors.add('Coupon Code: cannot be blank.', at);
      continue;
    }
    const coupon = await tx.coupons.findByCode(siteId, normaliseCouponCode(code));
    if (coupon === undefined || (product !== undefined && coupon.familyId !== product.familyId)) {
      errors.add(`Coupon Code: '${code}' - Coupon code could not be found.`, at);
      continue;
    }
    if (coupon.archivedAt !== null) {
      errors.add(`Coupon Code: '${code}' - Coupon is invalid.`, at);
      continue;
    }
    if (coupons.some((c) => c.id === coupon.id)) {
      errors.add(`Coupon Code: '${code}' - is given more than once.`, at);
      continue;
    }
    coupons.push(coupon);
  }
  for (const message of stackingErrors([], coupons)) errors.add(message, 'coupons');
  return coupons;
}
