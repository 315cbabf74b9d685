import { firstFreeHandle, HANDLE_PATTERN, slugify } from '../domain/catalog/handle.js';
import { parseMinorAmount } from '../domain/money/index.js';
import { BillingError, invalid, notFound, ValidationCollector } from '../errors.js';
import type {
  IntervalUnit,
  ProductFamilyRecord,
  ProductRecord,
  ProductTerms,
  ProductVersionRecord,
  StorageTransaction,
} from '../ports/storage.js';
import { type CommandDeps, runCommand } from './command-runner.js';
import { loadSite } from './site-service.js';

/** Input of a product family. */
export interface FamilyInput {
  readonly name: string;
  readonly handle?: string;
  readonly description?: string | null;
}

/** Input of a product: the spec's fields plus what billing needs. Amounts are minor units. */
export interface ProductInput {
  readonly name?: string;
  readonly handle?: string;
  readonly description?: string | null;
  readonly accountingCode?: string | null;
  readonly priceInCents?: number | string;
  readonly interval?: number;
  readonly intervalUnit?: IntervalUnit | 'months' | 'days';
  readonly trialPriceInCents?: number | string | null;
  readonly trialInterval?: number | null;
  readonly trialIntervalUnit?: IntervalUnit | null;
  readonly initialChargeInCents?: number | string | null;
  readonly initialChargeAfterTrial?: boolean;
  readonly expirationInterval?: number | null;
  readonly expirationIntervalUnit?: IntervalUnit | null;
  readonly requestCreditCard?: boolean;
  readonly requireCreditCard?: boolean;
  readonly taxable?: boolean;
}

/** A product as reads return it: the record with its current version's terms. */
export interface ProductView {
  readonly product: ProductRecord;
  readonly version: ProductVersionRecord;
}

/** Product families and versioned products of one site. */
export class CatalogService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /** Creates a product family; the handle is generated from the name when omitted. */
  async createFamily(subdomain: string, input: FamilyInput): Promise<ProductFamilyRecord> {
    const errors = new ValidationCollector();
    if (typeof input.name !== 'string' || input.name.trim() === '') errors.add('Name: cannot be blank.', 'name');
    if (input.handle !== undefined && !HANDLE_PATTERN.test(input.handle)) {
      errors.add('API Handle: must start with a letter or number and may only contain lowercase letters, numbers, underscores and dashes.', 'handle');
    }
    errors.throwIfAny();
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const handle =
        input.handle ?? (await firstFreeHandle(slugify(input.name), async (h) => (await tx.catalog.findFamilyByHandle(site.id, h)) !== undefined));
      return mapConflict(
        tx.catalog.insertFamily({
          siteId: site.id,
          name: input.name.trim(),
          handle,
          description: input.description ?? null,
          createdAt: now,
          updatedAt: now,
        }),
      );
    });
  }

  /** Creates a product in a family, as version 1. */
  async createProduct(subdomain: string, familyId: number, input: ProductInput): Promise<ProductView> {
    const terms = productTerms(undefined, input);
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const family = await tx.catalog.findFamily(site.id, familyId);
      if (!family) throw notFound('Product family', familyId);
      const handle =
        input.handle ?? (await firstFreeHandle(slugify(terms.name), async (h) => (await tx.catalog.findProductByHandle(site.id, h)) !== undefined));
      if (!HANDLE_PATTERN.test(handle)) throw invalid('API Handle: is invalid.', 'handle');
      return mapConflict(
        tx.catalog.insertProduct({ siteId: site.id, familyId, handle, archivedAt: null, createdAt: now, updatedAt: now }, terms),
      );
    });
  }

  /** Changes a product: a new immutable version becomes current; subscribers keep theirs. */
  updateProduct(subdomain: string, productId: number, input: ProductInput): Promise<ProductView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const current = await loadProduct(tx, site.id, productId);
      const terms = productTerms(current.version.terms, input);
      const next = await tx.catalog.addProductVersion(site.id, productId, current.product.currentVersion, terms, now);
      if (!next) throw new BillingError('conflict', 'The product was changed by another request; try again.');
      return next;
    });
  }

  /** A product with its current version, by id or handle. */
  getProduct(subdomain: string, idOrHandle: number | string): Promise<ProductView> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const product =
        typeof idOrHandle === 'number'
          ? await tx.catalog.findProduct(site.id, idOrHandle)
          : await tx.catalog.findProductByHandle(site.id, idOrHandle);
      if (!product) throw notFound('Product', idOrHandle);
      return loadProduct(tx, site.id, product.id);
    });
  }

  /** The site's families. */
  listFamilies(subdomain: string): Promise<ProductFamilyRecord[]> {
    return this.#deps.storage.transaction(async (tx) => tx.catalog.listFamilies((await loadSite(tx, subdomain)).id));
  }
}

/** A product with its current version; `not_found` when missing. */
export async function loadProduct(tx: StorageTransaction, siteId: number, productId: number): Promise<ProductView> {
  const product = await tx.catalog.findProduct(siteId, productId);
  if (!product) throw notFound('Product', productId);
  const version = await tx.catalog.findProductVersion(siteId, productId, product.currentVersion);
  if (!version) throw new BillingError('storage', `Product ${productId} has no version ${product.currentVersion}.`);
  return { product, version };
}

async function mapConflict<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof BillingError && error.code === 'conflict') throw invalid('API Handle: must be unique - that value has been taken.', 'handle');
    throw error;
  }
}

function productTerms(base: ProductTerms | undefined, input: ProductInput): ProductTerms {
  const errors = new ValidationCollector();
  const name = input.name ?? base?.name;
  if (typeof name !== 'string' || name.trim() === '') errors.add('Name: cannot be blank.', 'name');
  const price = input.priceInCents === undefined ? base?.priceInCents : errors.capture(() => parseMinorAmount(input.priceInCents, { field: 'Price in cents', attribute: 'price_in_cents' }));
  if (price === undefined && input.priceInCents === undefined) errors.add('Price in cents: cannot be blank.', 'price_in_cents');
  const interval = input.interval ?? base?.interval;
  if (!Number.isSafeInteger(interval) || (interval as number) < 1) errors.add('Interval: must be greater than 0.', 'interval');
  const rawUnit = input.intervalUnit ?? base?.intervalUnit ?? 'month';
  const intervalUnit = rawUnit === 'months' ? 'month' : rawUnit === 'days' ? 'day' : rawUnit;
  if (intervalUnit !== 'month' && intervalUnit !== 'day') errors.add("Interval unit: must be 'month' or 'day'.", 'interval_unit');
  const optionalCents = (value: number | string | null | undefined, fallback: number | null | undefined, field: string, attribute: string) =>
    value === undefined ? (fallback ?? null) : value === null ? null : (errors.capture(() => parseMinorAmount(value, { field, attribute })) ?? null);
  const terms: ProductTerms = {
    name: typeof name === 'string' ? name.trim() : '',
    description: input.description !== undefined ? input.description : (base?.description ?? null),
    accountingCode: input.accountingCode !== undefined ? input.accountingCode : (base?.accountingCode ?? null),
    priceInCents: price ?? 0,
    interval: interval ?? 1,
    intervalUnit: intervalUnit as IntervalUnit,
    trialPriceInCents: optionalCents(input.trialPriceInCents, base?.trialPriceInCents, 'Trial price in cents', 'trial_price_in_cents'),
    trialInterval: input.trialInterval !== undefined ? input.trialInterval : (base?.trialInterval ?? null),
    trialIntervalUnit: input.trialIntervalUnit !== undefined ? input.trialIntervalUnit : (base?.trialIntervalUnit ?? null),
    initialChargeInCents: optionalCents(input.initialChargeInCents, base?.initialChargeInCents, 'Initial charge in cents', 'initial_charge_in_cents'),
    initialChargeAfterTrial: input.initialChargeAfterTrial ?? base?.initialChargeAfterTrial ?? false,
    expirationInterval: input.expirationInterval !== undefined ? input.expirationInterval : (base?.expirationInterval ?? null),
    expirationIntervalUnit: input.expirationIntervalUnit !== undefined ? input.expirationIntervalUnit : (base?.expirationIntervalUnit ?? null),
    requestCreditCard: input.requestCreditCard ?? base?.requestCreditCard ?? true,
    requireCreditCard: input.requireCreditCard ?? base?.requireCreditCard ?? true,
    taxable: input.taxable ?? base?.taxable ?? false,
  };
  if (terms.trialInterval !== null && (!Number.isSafeInteger(terms.trialInterval) || terms.trialInterval < 1)) {
    errors.add('Trial interval: must be greater than 0.', 'trial_interval');
  }
  errors.throwIfAny();
  return terms;
}
