import { firstFreeHandle, HANDLE_PATTERN, slugify } from '../domain/catalog/handle.js';
import { parseMinorAmount } from '../domain/money/index.js';
import { BillingError, invalid, notFound, positiveWholeNumber, ValidationCollector } from '../errors.js';
import type {
  IntervalUnit,
  ProductFamilyRecord,
  ProductPricePointRecord,
  ProductRecord,
  ProductTerms,
  ProductVersionRecord,
  StorageTransaction,
} from '../ports/storage.js';
import { type CommandContext, type CommandDeps, runCommand } from './command-runner.js';
import { runRead } from './read-runner.js';
import { loadSite } from './site-lookup.js';
/** Input of a product family. */
export interface FamilyInput {
  readonly name: string;
  readonly handle?: string;
  readonly description?: string | null;
}

/** Input of a family update: any subset of the family's fields. */
export interface FamilyUpdateInput {
  readonly name?: string;
  readonly handle?: string;
  readonly description?: string | null;
}

/** A unit as callers may spell it: the service's singular or the plural. */
export type IntervalUnitInput = IntervalUnit | 'months' | 'days';

/**
 * Input of a product: the spec's fields plus what billing needs. Amounts are minor units. On an
 * update every field is optional and an omitted field keeps its current value; `null` clears an
 * optional one (a trial, a setup fee, an expiration).
 */
export interface ProductInput {
  readonly name?: string;
  readonly handle?: string;
  readonly description?: string | null;
  readonly accountingCode?: string | null;
  readonly priceInCents?: number | string;
  readonly interval?: number | string;
  readonly intervalUnit?: IntervalUnitInput;
  readonly trialPriceInCents?: number | string | null;
  readonly trialInterval?: number | string | null;
  readonly trialIntervalUnit?: IntervalUnitInput | null;
  readonly initialChargeInCents?: number | string | null;
  readonly initialChargeAfterTrial?: boolean;
  readonly expirationInterval?: number | string | null;
  readonly expirationIntervalUnit?: IntervalUnitInput | null;
  readonly requestCreditCard?: boolean;
  readonly requireCreditCard?: boolean;
  readonly taxable?: boolean;
}

/** A product as reads return it: the record with one version's terms (the current one, for reads). */
export interface ProductView {
  readonly product: ProductRecord;
  readonly version: ProductVersionRecord;
  /** The price point whose terms `version` holds, when the reader looked it up. */
  readonly pricePoint?: ProductPricePointRecord;
  /** The product's default price point's id, when the reader looked it up. */
  readonly defaultPricePointId?: number;
  /** The product's family, when the reader looked it up (a subscription read does). */
  readonly family?: ProductFamilyRecord;
}

/** Options of {@link CatalogService.listProducts}. */
export interface ListProductsOptions {
  /** Only this family's products (id or handle). */
  readonly familyId?: number | string;
  /** Include archived products; false by default, as the service hides them. */
  readonly includeArchived?: boolean;
}

/** What {@link copyCatalog} copied. */
export interface CatalogCopySummary {
  readonly families: number;
  readonly products: number;
  readonly components: number;
  readonly coupons: number;
}

const HANDLE_MESSAGE =
  'API Handle: must start with a letter or number and may only contain lowercase letters, numbers, underscores and dashes.';

/**
 * Product families and versioned products of one site. Every change to a product's terms adds an
 * immutable version and makes it current; reads show only the current version, while billing
 * resolves the version a subscription is pinned to with {@link loadProductVersion}.
 */
export class CatalogService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /** Creates a product family; the handle is generated from the name when omitted (`plans`, `plans-2`, ...). */
  async createFamily(subdomain: string, input: FamilyInput): Promise<ProductFamilyRecord> {
    const errors = new ValidationCollector();
    const name = requiredName(input.name, errors);
    if (input.handle !== undefined) checkHandle(input.handle, errors);
    const description = optionalText(input.description, 'Description', 'description', errors);
    errors.throwIfAny();
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const handle =
        input.handle ??
        (await firstFreeHandle(
          slugify(name),
          async (h) => (await tx.catalog.findFamilyByHandle(site.id, h)) !== undefined,
        ));
      return mapHandleConflict(
        tx.catalog.insertFamily({
          siteId: site.id,
          name,
          handle,
          description: description ?? null,
          createdAt: now,
          updatedAt: now,
        }),
      );
    });
  }

  /** A family by id or handle; `not_found` when missing. */
  async getFamily(subdomain: string, idOrHandle: number | string): Promise<ProductFamilyRecord> {
    return runRead(this.#deps, subdomain, ({ tx, site }) => loadFamily(tx, site.id, idOrHandle));
  }

  /** The site's families, by id. */
  async listFamilies(subdomain: string): Promise<ProductFamilyRecord[]> {
    return runRead(this.#deps, subdomain, ({ tx, site }) => tx.catalog.listFamilies(site.id));
  }

  /** Changes a family's name, handle or description; a taken handle is refused. */
  async updateFamily(
    subdomain: string,
    idOrHandle: number | string,
    input: FamilyUpdateInput,
  ): Promise<ProductFamilyRecord> {
    const errors = new ValidationCollector();
    const name = input.name === undefined ? undefined : requiredName(input.name, errors);
    if (input.handle !== undefined) checkHandle(input.handle, errors);
    const description = optionalText(input.description, 'Description', 'description', errors);
    errors.throwIfAny();
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const family = await loadFamily(tx, site.id, idOrHandle);
      const patch = {
        ...(name === undefined ? {} : { name }),
        ...(input.handle === undefined ? {} : { handle: input.handle }),
        ...(description === undefined ? {} : { description }),
        updatedAt: now,
      };
      const updated = await mapHandleConflict(tx.catalog.updateFamily(site.id, family.id, patch));
      if (!updated) throw notFound('Product family', family.id);
      return updated;
    });
  }

  /** Creates a product in a family (by id or handle), as version 1. */
  async createProduct(subdomain: string, familyId: number | string, input: ProductInput): Promise<ProductView> {
    const errors = new ValidationCollector();
    if (input.handle !== undefined) checkHandle(input.handle, errors);
    const terms = errors.capture(() => productTerms(undefined, input));
    errors.throwIfAny();
    const checked = terms as ProductTerms;
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const family = await loadFamily(tx, site.id, familyId);
      const handle =
        input.handle ??
        (await firstFreeHandle(
          slugify(checked.name),
          async (h) => (await tx.catalog.findProductByHandle(site.id, h)) !== undefined,
        ));
      const created = await mapHandleConflict(
        tx.catalog.insertProduct(
          { siteId: site.id, familyId: family.id, handle, archivedAt: null, createdAt: now, updatedAt: now },
          checked,
        ),
      );
      return withPricePoints(tx, created);
    });
  }

  /**
   * Changes a product's terms: a new immutable version becomes current and subscribers keep
   * theirs. An update that changes nothing adds no version. The handle cannot change here (the
   * storage port has no primitive for it yet); sending a different one is refused.
   */
  async updateProduct(subdomain: string, productId: number | string, input: ProductInput): Promise<ProductView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const current = await loadProduct(tx, site.id, await productIdOf(tx, site.id, productId));
      const errors = new ValidationCollector();
      if (input.handle !== undefined && input.handle !== current.product.handle) {
        errors.add('API Handle: cannot be changed once the product exists.', 'handle');
      }
      const terms = errors.capture(() => productTerms(current.version.terms, input));
      errors.throwIfAny();
      if (sameTerms(terms as ProductTerms, current.version.terms)) return current;
      const next = await tx.catalog.addProductVersion(
        site.id,
        current.product.id,
        current.product.currentVersion,
        terms as ProductTerms,
        now,
      );
      if (!next) throw new BillingError('conflict', 'The product was changed by another request; try again.');
      return withPricePoints(tx, next);
    });
  }

  /** A product with its current version, by id or handle. Old versions are never returned here. */
  async getProduct(subdomain: string, idOrHandle: number | string): Promise<ProductView> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) =>
      loadProduct(tx, site.id, await productIdOf(tx, site.id, idOrHandle)),
    );
  }

  /** The site's products with their current versions, by id; archived ones only when asked for. */
  async listProducts(subdomain: string, options: ListProductsOptions = {}): Promise<ProductView[]> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const familyId =
        options.familyId === undefined ? undefined : (await loadFamily(tx, site.id, options.familyId)).id;
      const products = await tx.catalog.listProducts(site.id, familyId);
      const views: ProductView[] = [];
      for (const product of products) {
        if (product.archivedAt !== null && options.includeArchived !== true) continue;
        views.push(await loadProduct(tx, site.id, product.id));
      }
      return views;
    });
  }

  /**
   * Archives a product: it can no longer be subscribed to, while its subscribers keep billing as
   * before. Archiving an archived product keeps the first archive time.
   */
  async archiveProduct(subdomain: string, productId: number | string): Promise<ProductView> {
    return this.#setArchived(subdomain, productId, true);
  }

  /** Makes an archived product available for new subscriptions again. */
  async unarchiveProduct(subdomain: string, productId: number | string): Promise<ProductView> {
    return this.#setArchived(subdomain, productId, false);
  }

  #setArchived(subdomain: string, productId: number | string, archived: boolean): Promise<ProductView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const current = await loadProduct(tx, site.id, await productIdOf(tx, site.id, productId));
      if ((current.product.archivedAt !== null) === archived) return current;
      const product = await tx.catalog.setProductArchived(site.id, current.product.id, archived ? now : null, now);
      if (!product) throw notFound('Product', current.product.id);
      return withPricePoints(tx, { product, version: current.version });
    });
  }
}

/** A family by id or handle; `not_found` when missing. */
export async function loadFamily(
  tx: StorageTransaction,
  siteId: number,
  idOrHandle: number | string,
): Promise<ProductFamilyRecord> {
  const family =
    typeof idOrHandle === 'number'
      ? await tx.catalog.findFamily(siteId, idOrHandle)
      : await tx.catalog.findFamilyByHandle(siteId, idOrHandle);
  if (!family) throw notFound('Product family', idOrHandle);
  return family;
}

/** A product with its current version; `not_found` when missing. */
export async function loadProduct(tx: StorageTransaction, siteId: number, productId: number): Promise<ProductView> {
  const product = await tx.catalog.findProduct(siteId, productId);
  if (!product) throw notFound('Product', productId);
  const version = await tx.catalog.findProductVersion(siteId, productId, product.currentVersion);
  if (!version) throw new BillingError('storage', `Product ${productId} has no version ${product.currentVersion}.`);
  return withPricePoints(tx, { product, version });
}

/**
 * The view with its price point (the one whose terms the version holds) and the product's default
 * price point's id, for the reads that show them (`product_price_point_id`, ...).
 */
export async function withPricePoints(tx: StorageTransaction, view: ProductView): Promise<ProductView> {
  const { product, version } = view;
  const family = await tx.catalog.findFamily(product.siteId, product.familyId);
  const defaultPricePoint = await tx.pricePoints.findDefaultProductPricePoint(product.siteId, product.id);
  const pricePoint =
    version.pricePointId == null || version.pricePointId === defaultPricePoint?.id
      ? defaultPricePoint
      : await tx.pricePoints.findProductPricePoint(product.siteId, version.pricePointId);
  return {
    product,
    version,
    ...(pricePoint === undefined ? {} : { pricePoint }),
    ...(defaultPricePoint === undefined ? {} : { defaultPricePointId: defaultPricePoint.id }),
    ...(family === undefined ? {} : { family }),
  };
}

/**
 * A product with one particular version, current or old: what billing uses for a subscription
 * pinned to that version. `not_found` when the product or the version does not exist. Product
 * reads never go through here, so old versions stay invisible to API clients.
 */
export async function loadProductVersion(
  tx: StorageTransaction,
  siteId: number,
  productId: number,
  version: number,
): Promise<ProductView> {
  const product = await tx.catalog.findProduct(siteId, productId);
  if (!product) throw notFound('Product', productId);
  const found = await tx.catalog.findProductVersion(siteId, productId, version);
  if (!found) {
    throw new BillingError('not_found', `Product ${productId} has no version ${version}.`, {
      data: { what: 'product_version', id: productId, version },
    });
  }
  return { product, version: found };
}

/**
 * Copies a site's catalog into another site inside the caller's command (site clone): families,
 * products at their current version (as version 1 of the copy), components at their current
 * pricing (as version 1) and coupons with their redemptions reset. Handles and codes are kept, so
 * the target must not have a catalog of its own yet; ids are new and references are remapped.
 * Archived records stay archived. Customers, subscriptions and metafields are not copied.
 */
export async function copyCatalog(
  ctx: CommandContext,
  fromSiteId: number,
  toSiteId: number,
): Promise<CatalogCopySummary> {
  const { tx, now } = ctx;
  const familyIds = new Map<number, number>();
  const mapFamily = (id: number): number => {
    const mapped = familyIds.get(id);
    if (mapped === undefined)
      throw new BillingError('storage', `Product family ${id} of site ${fromSiteId} is missing.`);
    return mapped;
  };
  for (const family of await tx.catalog.listFamilies(fromSiteId)) {
    const copy = await tx.catalog.insertFamily({
      siteId: toSiteId,
      name: family.name,
      handle: family.handle,
      description: family.description,
      createdAt: now,
      updatedAt: now,
    });
    familyIds.set(family.id, copy.id);
  }
  const products = await tx.catalog.listProducts(fromSiteId);
  for (const product of products) {
    const { version } = await loadProduct(tx, fromSiteId, product.id);
    await tx.catalog.insertProduct(
      {
        siteId: toSiteId,
        familyId: mapFamily(product.familyId),
        handle: product.handle,
        archivedAt: product.archivedAt,
        createdAt: now,
        updatedAt: now,
      },
      version.terms,
    );
  }
  const components = await tx.components.list(fromSiteId);
  for (const component of components) {
    const version = await tx.components.findVersion(fromSiteId, component.id, component.currentVersion);
    if (!version)
      throw new BillingError('storage', `Component ${component.id} has no version ${component.currentVersion}.`);
    const { id: _id, currentVersion: _current, ...fields } = component;
    await tx.components.insert(
      { ...fields, siteId: toSiteId, familyId: mapFamily(component.familyId), createdAt: now, updatedAt: now },
      version.pricing,
    );
  }
  let coupons = 0;
  // The port lists coupons a page at a time; 200 is the service's largest page.
  for (let page = 1; ; page++) {
    const batch = await tx.coupons.list(fromSiteId, { page, perPage: 200 });
    for (const coupon of batch) {
      const { id: _id, redemptions: _redemptions, ...fields } = coupon;
      await tx.coupons.insert({
        ...fields,
        siteId: toSiteId,
        familyId: mapFamily(coupon.familyId),
        createdAt: now,
        updatedAt: now,
      });
    }
    coupons += batch.length;
    if (batch.length < 200) break;
  }
  return { families: familyIds.size, products: products.length, components: components.length, coupons };
}

/** The id of a product given by id or handle; `not_found` when there is none. */
export async function productIdOf(
  tx: StorageTransaction,
  siteId: number,
  idOrHandle: number | string,
): Promise<number> {
  const product =
    typeof idOrHandle === 'number'
      ? await tx.catalog.findProduct(siteId, idOrHandle)
      : await tx.catalog.findProductByHandle(siteId, idOrHandle);
  if (!product) throw notFound('Product', idOrHandle);
  return product.id;
}

/** A unique-key violation on insert or update is a taken handle, reported in the service's words. */
async function mapHandleConflict<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof BillingError && error.code === 'conflict')
      throw invalid('API Handle: must be unique - that value has been taken.', 'handle');
    throw error;
  }
}

function requiredName(value: unknown, errors: ValidationCollector): string {
  if (typeof value !== 'string' || value.trim() === '') {
    errors.add('Name: cannot be blank.', 'name');
    return '';
  }
  return value.trim();
}

function checkHandle(handle: unknown, errors: ValidationCollector): void {
  if (typeof handle !== 'string' || !HANDLE_PATTERN.test(handle)) errors.add(HANDLE_MESSAGE, 'handle');
}

/** A nullable text field: undefined when not given, null to clear, else the string. */
function optionalText(
  value: unknown,
  field: string,
  attribute: string,
  errors: ValidationCollector,
): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== 'string') {
    errors.add(`${field}: must be a string.`, attribute);
    return undefined;
  }
  return value;
}

function intervalUnit(
  value: unknown,
  field: string,
  attribute: string,
  errors: ValidationCollector,
): IntervalUnit | undefined {
  if (value === 'month' || value === 'months') return 'month';
  if (value === 'day' || value === 'days') return 'day';
  errors.add(`${field}: must be 'month' or 'day'.`, attribute);
  return undefined;
}

function flag(
  value: unknown,
  fallback: boolean,
  field: string,
  attribute: string,
  errors: ValidationCollector,
): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    errors.add(`${field}: must be true or false.`, attribute);
    return fallback;
  }
  return value;
}

/**
 * The terms of a new version: the input over `base` (the current terms; undefined on create),
 * validated as a whole so that every problem is reported at once. A trial needs an interval (its
 * unit defaults to month, its price to 0); clearing the interval clears the trial. Expiration works
 * the same way.
 */
export function productTerms(base: ProductTerms | undefined, input: ProductInput): ProductTerms {
  const errors = new ValidationCollector();
  const name = input.name === undefined && base ? base.name : requiredName(input.name, errors);
  const money = (value: unknown, field: string, attribute: string) =>
    errors.capture(() => parseMinorAmount(value, { field, attribute }));
  let priceInCents = base?.priceInCents;
  if (input.priceInCents !== undefined) priceInCents = money(input.priceInCents, 'Price in cents', 'price_in_cents');
  else if (!base) errors.add('Price in cents: cannot be blank.', 'price_in_cents');
  let interval = base?.interval;
  if (input.interval !== undefined) interval = positiveWholeNumber(input.interval, 'Interval', 'interval', errors);
  else if (!base) errors.add('Interval: cannot be blank.', 'interval');
  const unit =
    input.intervalUnit === undefined
      ? (base?.intervalUnit ?? 'month')
      : intervalUnit(input.intervalUnit, 'Interval unit', 'interval_unit', errors);

  const given = <T>(value: T | undefined, fallback: T | null | undefined): T | null =>
    value === undefined ? (fallback ?? null) : value;
  // Trial: the interval decides whether there is one.
  const rawTrialInterval = given(input.trialInterval, base?.trialInterval);
  let trialInterval: number | null = null;
  let trialIntervalUnit: IntervalUnit | null = null;
  let trialPriceInCents: number | null = null;
  if (rawTrialInterval === null) {
    if ((input.trialPriceInCents ?? null) !== null || (input.trialIntervalUnit ?? null) !== null) {
      errors.add(
        'Trial interval: cannot be blank when a trial price or trial interval unit is given.',
        'trial_interval',
      );
    }
  } else {
    trialInterval = positiveWholeNumber(rawTrialInterval, 'Trial interval', 'trial_interval', errors) ?? null;
    const rawUnit = given(input.trialIntervalUnit, base?.trialIntervalUnit) ?? 'month';
    trialIntervalUnit = intervalUnit(rawUnit, 'Trial interval unit', 'trial_interval_unit', errors) ?? null;
    const rawPrice = given(input.trialPriceInCents, base?.trialPriceInCents) ?? 0;
    trialPriceInCents = money(rawPrice, 'Trial price in cents', 'trial_price_in_cents') ?? null;
  }
  // Expiration: same shape, without a price.
  const rawExpiration = given(input.expirationInterval, base?.expirationInterval);
  let expirationInterval: number | null = null;
  let expirationIntervalUnit: IntervalUnit | null = null;
  if (rawExpiration === null) {
    if ((input.expirationIntervalUnit ?? null) !== null) {
      errors.add(
        'Expiration interval: cannot be blank when an expiration interval unit is given.',
        'expiration_interval',
      );
    }
  } else {
    expirationInterval =
      positiveWholeNumber(rawExpiration, 'Expiration interval', 'expiration_interval', errors) ?? null;
    const rawUnit = given(input.expirationIntervalUnit, base?.expirationIntervalUnit) ?? 'month';
    expirationIntervalUnit =
      intervalUnit(rawUnit, 'Expiration interval unit', 'expiration_interval_unit', errors) ?? null;
  }
  const rawInitial = given(input.initialChargeInCents, base?.initialChargeInCents);
  const initialChargeInCents =
    rawInitial === null ? null : (money(rawInitial, 'Initial charge in cents', 'initial_charge_in_cents') ?? null);

  const description = optionalText(input.description, 'Description', 'description', errors);
  const accountingCode = optionalText(input.accountingCode, 'Accounting code', 'accounting_code', errors);
  const terms: ProductTerms = {
    name,
    description: description === undefined ? (base?.description ?? null) : description,
    accountingCode: accountingCode === undefined ? (base?.accountingCode ?? null) : accountingCode,
    priceInCents: priceInCents ?? 0,
    interval: interval ?? 1,
    intervalUnit: unit ?? 'month',
    trialPriceInCents,
    trialInterval,
    trialIntervalUnit,
    initialChargeInCents,
    initialChargeAfterTrial: flag(
      input.initialChargeAfterTrial,
      base?.initialChargeAfterTrial ?? false,
      'Initial charge after trial',
      'initial_charge_after_trial',
      errors,
    ),
    expirationInterval,
    expirationIntervalUnit,
    requestCreditCard: flag(
      input.requestCreditCard,
      base?.requestCreditCard ?? true,
      'Request credit card',
      'request_credit_card',
      errors,
    ),
    requireCreditCard: flag(
      input.requireCreditCard,
      base?.requireCreditCard ?? true,
      'Require credit card',
      'require_credit_card',
      errors,
    ),
    taxable: flag(input.taxable, base?.taxable ?? false, 'Taxable', 'taxable', errors),
  };
  errors.throwIfAny();
  return terms;
}

/** Whether two versions' terms are the same, field by field. */
export function sameTerms(a: ProductTerms, b: ProductTerms): boolean {
  return (Object.keys(a) as (keyof ProductTerms)[]).every((key) => a[key] === b[key]);
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const CATALOG_METHODS = [
  'createFamily',
  'getFamily',
  'listFamilies',
  'updateFamily',
  'createProduct',
  'updateProduct',
  'getProduct',
  'listProducts',
  'archiveProduct',
  'unarchiveProduct',
] as const;
