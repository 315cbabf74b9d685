import { normaliseCouponCode, parseCouponCode } from '../domain/catalog/coupon-code.js';
import { parseMajorAmount, parseMinorAmount, parsePercentage } from '../domain/money/index.js';
import { endOfLocalDay, parseInstant } from '../domain/time/index.js';
import {
  BillingError,
  invalid,
  notFound,
  positiveWholeNumber,
  ValidationCollector,
  validationError,
} from '../errors.js';
import type { CompoundingStrategy, CouponRecord, SiteRecord, StorageTransaction } from '../ports/storage.js';
import { loadFamily } from './catalog-service.js';
import { type CommandDeps, runCommand } from './command-runner.js';
import { type CouponCurrencyPriceInput, checkCouponCurrencyPrices, refuseCurrencies } from './currency-prices.js';
import { clampPage } from './customer-service.js';
import { runRead } from './read-runner.js';
import { loadSite } from './site-lookup.js';

/**
 * Input of a coupon. Exactly one of `percentage` and an amount
 * (`amountInCents`, or `amount` in major units of the site's currency) is set. On an update every
 * field is optional; sending one kind of discount replaces the other.
 */
export interface CouponInput {
  readonly name?: string;
  /** Normalised to upper case; letters, digits and `_ % @ + - .`; unique per site. */
  readonly code?: string;
  readonly description?: string | null;
  /** 0-100, an exact decimal with up to 4 places (`"12.5"`). */
  readonly percentage?: string | number | null;
  readonly amountInCents?: number | string | null;
  /** The classic API's amount in major units (`"10.00"`). */
  readonly amount?: string | number | null;
  /** Applied at signup and every renewal (for `durationPeriodCount` renewals, or forever). */
  readonly recurring?: boolean;
  readonly durationPeriodCount?: number | string | null;
  /** The last day the coupon can be added: it expires at the end of that day in the site's time zone. */
  readonly endDate?: string | Date | null;
  readonly allowNegativeBalance?: boolean;
  readonly stackable?: boolean;
  readonly compoundingStrategy?: CompoundingStrategy | 'full_price';
  readonly conversionLimit?: number | string | null;
  /** The family it can be added in (id or handle); the site's first family when omitted on create. */
  readonly productFamilyId?: number | string;
}

/** Options of {@link CouponService.validate}. */
export interface CouponValidateOptions {
  /** The family the coupon must belong to (id or handle); any family when omitted. */
  readonly productFamilyId?: number | string;
  /** The instant to judge expiry at; the clock's now by default. */
  readonly at?: Date;
}

/** A page of the coupon list: `perPage` defaults to 30 and is clamped to 200. */
export interface ListCouponsOptions {
  readonly page?: number;
  readonly perPage?: number;
  /** Only this family's coupons (id or handle); an unknown family is `not_found`. */
  readonly familyId?: number | string;
}

/** The service's message for a code that cannot be used, with the string body of `validate`. */
export const COUPON_NOT_FOUND = 'Coupon code could not be found.';

/**
 * Coupons of a site: percentage or flat amount, one-time or recurring, scoped to a
 * product family, with an optional end date and usage limit. Redemption counts are kept by the
 * storage's race-safe `redeem`, so a limit holds under concurrent signups.
 */
export class CouponService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /** Creates a coupon in a family (the site's first family when `productFamilyId` is omitted). */
  async create(subdomain: string, input: CouponInput): Promise<CouponRecord> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const errors = new ValidationCollector();
      let familyId: number | undefined;
      if (input.productFamilyId !== undefined) {
        familyId = await familyIdOf(tx, site.id, input.productFamilyId, errors);
      } else {
        familyId = (await tx.catalog.listFamilies(site.id))[0]?.id;
        if (familyId === undefined)
          errors.add('Product family: cannot be blank; create a product family first.', 'product_family_id');
      }
      const fields = couponFields(input, undefined, site, errors);
      errors.throwIfAny();
      await refuseSubcodeTaken(tx, site.id, fields.code);
      return mapCodeConflict(
        tx.coupons.insert({
          siteId: site.id,
          familyId: familyId as number,
          name: fields.name as string,
          code: fields.code as string,
          description: fields.description ?? null,
          percentage: fields.percentage ?? null,
          amountInCents: fields.amountInCents ?? null,
          recurring: fields.recurring ?? false,
          durationPeriodCount: fields.durationPeriodCount ?? null,
          endDate: fields.endDate ?? null,
          allowNegativeBalance: fields.allowNegativeBalance ?? false,
          stackable: fields.stackable ?? false,
          compoundingStrategy: fields.compoundingStrategy ?? 'compound',
          conversionLimit: fields.conversionLimit ?? null,
          archivedAt: null,
          createdAt: now,
          updatedAt: now,
        }),
      );
    });
  }

  /** Changes a coupon's fields; the result must still have exactly one kind of discount. */
  async update(subdomain: string, couponId: number, input: CouponInput): Promise<CouponRecord> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const current = await loadCoupon(tx, site.id, couponId);
      const errors = new ValidationCollector();
      const familyId =
        input.productFamilyId === undefined ? undefined : await familyIdOf(tx, site.id, input.productFamilyId, errors);
      const fields = couponFields(input, current, site, errors);
      errors.throwIfAny();
      if (fields.code !== current.code) await refuseSubcodeTaken(tx, site.id, fields.code);
      const updated = await mapCodeConflict(
        tx.coupons.update(site.id, current.id, {
          ...fields,
          ...(familyId === undefined ? {} : { familyId }),
          updatedAt: now,
        }),
      );
      if (!updated) throw notFound('Coupon', couponId);
      return updated;
    });
  }

  /**
   * Archives a coupon (the service's `DELETE /coupons/{id}`): it can no longer be added, while
   * subscriptions that have it keep the discount. Archiving twice keeps the first archive time.
   */
  async archive(subdomain: string, couponId: number): Promise<CouponRecord> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const current = await loadCoupon(tx, site.id, couponId);
      if (current.archivedAt !== null) return current;
      const updated = await tx.coupons.update(site.id, current.id, { archivedAt: now, updatedAt: now });
      if (!updated) throw notFound('Coupon', couponId);
      return updated;
    });
  }

  /**
   * Prices of an amount coupon in other currencies (`PUT /coupons/{id}/currency_prices.json`),
   * under the spec's one-currency rule (see currency-prices.ts). In order: the entries are checked
   * (currency, amount in its major units, each currency once, at most `MAX_CURRENCY_PRICES`); the
   * coupon is looked up (`not_found`); a percentage coupon is refused (it has no amount to price);
   * then each currency is refused by name, since a site defines no currency besides its own, which
   * is the coupon's primary pricing. Never resolves: every request ends in one of these refusals,
   * read-only, so nothing is written. Refusals are a map of field to messages.
   */
  async createOrUpdateCurrencyPrices(
    subdomain: string,
    couponId: number,
    prices: readonly CouponCurrencyPriceInput[],
  ): Promise<never> {
    const currencies = checkCouponCurrencyPrices(prices);
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      if (!Number.isSafeInteger(couponId) || couponId < 1) throw notFound('Coupon', couponId);
      const coupon = await loadCoupon(tx, site.id, couponId);
      if (coupon.percentage !== null)
        throw validationError(
          [
            {
              message:
                'Currency prices: a percentage coupon has no amount to price in other currencies; only amount coupons have currency prices.',
              attribute: 'currency_prices',
            },
          ],
          'map',
        );
      return refuseCurrencies(site, currencies, 'coupon');
    });
  }

  /** A coupon by id; `not_found` when missing. */
  async get(subdomain: string, couponId: number): Promise<CouponRecord> {
    return this.#deps.storage.transaction(async (tx) => loadCoupon(tx, (await loadSite(tx, subdomain)).id, couponId));
  }

  /** A coupon by code, in any letter case, archived or not; 404 "Coupon code could not be found." when missing. */
  async findByCode(subdomain: string, code: string): Promise<CouponRecord> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const coupon =
        typeof code === 'string' ? await tx.coupons.findByCode(site.id, normaliseCouponCode(code)) : undefined;
      if (!coupon) throw couponNotFound();
      return coupon;
    });
  }

  /** One page of the site's coupons of every family, by id: 30 a page by default, at most 200. */
  async list(subdomain: string, options: ListCouponsOptions = {}): Promise<CouponRecord[]> {
    const errors = new ValidationCollector();
    const page = options.page ?? 1;
    if (!Number.isSafeInteger(page) || page < 1) errors.add('Page: must be a whole number greater than 0.', 'page');
    const perPage = options.perPage ?? 30;
    if (!Number.isSafeInteger(perPage) || perPage < 1)
      errors.add('Per page: must be a whole number greater than 0.', 'per_page');
    errors.throwIfAny();
    const size = Math.min(perPage, 200);
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      if (options.familyId === undefined) return tx.coupons.list(site.id, { page, perPage: size });
      const familyId = (await loadFamily(tx, site.id, options.familyId)).id;
      // The repository pages every family's coupons together; a site has few coupons, so one
      // family's page is cut from all of them rather than with a storage filter of its own.
      const mine: CouponRecord[] = [];
      for (let chunk = 1; ; chunk += 1) {
        const rows = await tx.coupons.list(site.id, { page: chunk, perPage: 200 });
        mine.push(...rows.filter((coupon) => coupon.familyId === familyId));
        if (rows.length < 200) break;
      }
      return mine.slice((page - 1) * size, page * size);
    });
  }

  /**
   * Checks whether a code can be used now (the coupon `validate` endpoint): returns the coupon, or a
   * `not_found` error whose body is a bare string (`{"errors":"Coupon code could not be found."}`,
   * HTTP 404) saying why: not found (also when it belongs to another family than the one asked
   * about), archived ("Coupon is invalid."), past its end date ("Coupon code has expired.") or at
   * its usage limit ("Coupon has reached its usage limit.").
   */
  async validate(subdomain: string, code: string, options: CouponValidateOptions = {}): Promise<CouponRecord> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const coupon =
        typeof code === 'string' ? await tx.coupons.findByCode(site.id, normaliseCouponCode(code)) : undefined;
      let familyId: number | undefined;
      if (options.productFamilyId !== undefined) {
        const family =
          typeof options.productFamilyId === 'number'
            ? await tx.catalog.findFamily(site.id, options.productFamilyId)
            : await tx.catalog.findFamilyByHandle(site.id, options.productFamilyId);
        // An unknown family has no coupons: the code is not found there.
        familyId = family?.id ?? -1;
      }
      const problem = unusable(coupon, familyId, options.at ?? this.#deps.clock.now());
      if (problem !== undefined) {
        throw new BillingError('not_found', problem, { shape: 'string', data: { what: 'coupon', code } });
      }
      return coupon as CouponRecord;
    });
  }

  /**
   * Adds subcodes to a coupon (`POST /coupons/{id}/codes.json`): each is normalised like a code
   * (upper case) and lands in one of the answer's lists: created, duplicate (already a code or
   * subcode on the site, or repeated in the request) or invalid (blank, too long, or characters a
   * code may not have). Nothing fails as a whole except a missing coupon.
   */
  createSubcodes(subdomain: string, couponId: number, codes: unknown): Promise<SubcodesResult> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const coupon = await loadCoupon(tx, site.id, couponId);
      return addSubcodes(tx, site.id, coupon.id, readSubcodeList(codes), now);
    });
  }

  /**
   * Replaces every subcode of a coupon with the ones given (`PUT /coupons/{id}/codes.json`), in
   * one transaction; the answer is as for {@link createSubcodes}. Subscriptions that used a removed
   * subcode keep the coupon (they hold the coupon's own code).
   */
  replaceSubcodes(subdomain: string, couponId: number, codes: unknown): Promise<SubcodesResult> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const coupon = await loadCoupon(tx, site.id, couponId);
      const list = readSubcodeList(codes);
      await tx.couponSubcodes.deleteAll(site.id, coupon.id);
      return addSubcodes(tx, site.id, coupon.id, list, now);
    });
  }

  /** One page of a coupon's subcodes, oldest first (20 a page by default, at most 200). */
  listSubcodes(
    subdomain: string,
    couponId: number,
    options: { page?: number; perPage?: number } = {},
  ): Promise<string[]> {
    const page = clampPage(options.page, options.perPage);
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const coupon = await loadCoupon(tx, site.id, couponId);
      return (await tx.couponSubcodes.list(site.id, coupon.id, page)).map((s) => s.code);
    });
  }

  /** Deletes one subcode of a coupon (any letter case); `not_found` when the coupon has no such subcode. */
  deleteSubcode(subdomain: string, couponId: number, code: string): Promise<void> {
    return runCommand(this.#deps, async ({ tx }) => {
      const site = await loadSite(tx, subdomain);
      const coupon = await loadCoupon(tx, site.id, couponId);
      const normalised = typeof code === 'string' ? normaliseCouponCode(code) : '';
      if (!(await tx.couponSubcodes.delete(site.id, coupon.id, normalised))) throw notFound('Coupon subcode', code);
    });
  }

  /**
   * How a coupon has been used, one entry per product of its family (`GET
   * /product_families/{id}/coupons/{id}/usage.json`), computed from the subscriptions that hold the
   * coupon now (by its code; one that had it removed is no longer counted), grouped by their
   * current product:
   * - `signups`: how many such subscriptions;
   * - `savingsInCents`: the sum of their coupon discount lines (ledger adjustments of kind `coupon`
   *   whose memo names this coupon's code), as a positive amount;
   * - `revenueInCents`: what they have paid: successful payments less refunds, on their ledgers.
   * `familyId`, when given, must be the coupon's family (`not_found` otherwise).
   */
  usage(subdomain: string, couponId: number, familyId?: number | string): Promise<CouponUsageRow[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const coupon = await loadCoupon(tx, site.id, couponId);
      if (familyId !== undefined && (await loadFamily(tx, site.id, familyId)).id !== coupon.familyId) {
        throw notFound('Coupon', couponId);
      }
      const rows = new Map<number, { signups: number; savingsInCents: number; revenueInCents: number }>();
      for (const product of await tx.catalog.listProducts(site.id, coupon.familyId)) {
        rows.set(product.id, { signups: 0, savingsInCents: 0, revenueInCents: 0 });
      }
      const memoPrefix = `Coupon: ${coupon.code}`;
      for (let page = 1; ; page += 1) {
        const subs = await tx.subscriptions.list(
          site.id,
          { couponCode: coupon.code, direction: 'asc' },
          { page, perPage: 200 },
        );
        for (const sub of subs) {
          let row = rows.get(sub.productId);
          if (row === undefined) {
            // A subscription moved to a product of another family still counts, under that product.
            row = { signups: 0, savingsInCents: 0, revenueInCents: 0 };
            rows.set(sub.productId, row);
          }
          row.signups += 1;
          for (const line of await tx.ledger.listForSubscription(site.id, sub.id)) {
            const namesCoupon = line.memo === memoPrefix || line.memo.startsWith(`${memoPrefix} - `);
            if (line.type === 'adjustment' && line.kind === 'coupon' && namesCoupon) {
              row.savingsInCents -= line.amountInCents;
            } else if (line.type === 'payment' && line.success !== false) {
              row.revenueInCents += line.amountInCents;
            } else if (line.type === 'refund') {
              row.revenueInCents -= line.amountInCents;
            }
          }
        }
        if (subs.length < 200) break;
      }
      const out: CouponUsageRow[] = [];
      for (const [productId, row] of rows) {
        const product = await tx.catalog.findProduct(site.id, productId);
        const version = product && (await tx.catalog.findProductVersion(site.id, productId, product.currentVersion));
        out.push({ productId, productName: version ? version.terms.name : '', ...row });
      }
      return out.sort((a, b) => a.productId - b.productId);
    });
  }
}

/** The answer of a subcode create or replace: codes normalised, in the order sent. */
export interface SubcodesResult {
  readonly createdCodes: string[];
  readonly duplicateCodes: string[];
  readonly invalidCodes: string[];
}

/** The use of a coupon on one product (see {@link CouponService.usage}). */
export interface CouponUsageRow {
  readonly productId: number;
  readonly productName: string;
  readonly signups: number;
  readonly savingsInCents: number;
  readonly revenueInCents: number;
}

/** Most subcodes one request may carry: a bound on the work of one request, not on a coupon's subcodes. */
export const MAX_SUBCODES_PER_REQUEST = 1000;

function readSubcodeList(codes: unknown): unknown[] {
  if (!Array.isArray(codes)) throw invalid('Codes: must be a list of codes.', 'codes');
  if (codes.length > MAX_SUBCODES_PER_REQUEST) {
    throw invalid(`Codes: at most ${MAX_SUBCODES_PER_REQUEST} codes can be sent at once.`, 'codes');
  }
  return codes;
}

async function addSubcodes(
  tx: StorageTransaction,
  siteId: number,
  couponId: number,
  codes: readonly unknown[],
  now: Date,
): Promise<SubcodesResult> {
  const result: SubcodesResult = { createdCodes: [], duplicateCodes: [], invalidCodes: [] };
  for (const raw of codes) {
    let code: string;
    try {
      code = parseCouponCode(raw);
    } catch {
      result.invalidCodes.push(typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? String(raw)));
      continue;
    }
    // Unique across the site's coupon codes and subcodes: a code must name one coupon.
    if ((await tx.coupons.findByCode(siteId, code)) !== undefined) {
      result.duplicateCodes.push(code);
      continue;
    }
    const inserted = await tx.couponSubcodes.insert({ siteId, couponId, code, createdAt: now });
    (inserted === undefined ? result.duplicateCodes : result.createdCodes).push(code);
  }
  return result;
}

/** Refuses a coupon code that is already a subcode on the site, with the message of a taken code. */
async function refuseSubcodeTaken(tx: StorageTransaction, siteId: number, code: string | undefined): Promise<void> {
  if (code !== undefined && (await tx.couponSubcodes.findByCode(siteId, code)) !== undefined) {
    throw invalid('Code: must be unique - that value has been taken.', 'code');
  }
}

/** A coupon by id; `not_found` when missing. */
export async function loadCoupon(tx: StorageTransaction, siteId: number, couponId: number): Promise<CouponRecord> {
  const coupon = await tx.coupons.findById(siteId, couponId);
  if (!coupon) throw notFound('Coupon', couponId);
  return coupon;
}

/**
 * Checks that a code can be added at signup and counts one use, inside the signup's command.
 * The coupon must exist, not be archived, not be past its end date at `now`, and belong to the
 * product's family; otherwise the signup fails with the service's 422 message
 * `Coupon Code: '<code>' - Coupon code could not be found.` (reference C4, the code as sent).
 * The use is counted with the storage's race-safe `redeem`, so of concurrent signups only as many
 * as the limit allows get through; the others fail with
 * `Coupon Code: '<code>' - Coupon has reached its usage limit.`. Returns the coupon after the
 * redemption. A failure throws before anything is written, and the signup's rollback undoes the
 * redemption if a later step fails.
 */
export async function redeemForSignup(
  tx: StorageTransaction,
  siteId: number,
  code: string,
  productFamilyId: number,
  now: Date,
): Promise<CouponRecord> {
  const label = `Coupon Code: '${String(code)}' - `;
  const coupon = typeof code === 'string' ? await tx.coupons.findByCode(siteId, normaliseCouponCode(code)) : undefined;
  const problem = unusable(coupon, productFamilyId, now, false);
  if (problem !== undefined || !coupon) {
    throw validationError([{ message: `${label}${COUPON_NOT_FOUND}`, attribute: 'coupon_code' }]);
  }
  const redeemed = await tx.coupons.redeem(siteId, coupon.id, now);
  if (!redeemed)
    throw validationError([{ message: `${label}Coupon has reached its usage limit.`, attribute: 'coupon_code' }]);
  return redeemed;
}

/**
 * Why a coupon cannot be added, or undefined when it can: missing or of another family (not
 * found), archived, past its end date at `at`, or (when `checkLimit`) out of uses.
 */
/**
 * The coupon a signup may add with this code, checked but not redeemed (so the discount can be
 * planned before any money moves): it must exist, belong to the product's family, not be archived,
 * expired or used up. Otherwise a validation error with the service's message (reference C4).
 */
export async function couponForSignup(
  tx: StorageTransaction,
  siteId: number,
  code: unknown,
  productFamilyId: number,
  now: Date,
): Promise<CouponRecord> {
  const label = `Coupon Code: '${String(code)}' - `;
  const coupon = typeof code === 'string' ? await tx.coupons.findByCode(siteId, normaliseCouponCode(code)) : undefined;
  const problem = unusable(coupon, productFamilyId, now, true);
  if (problem !== undefined || !coupon) {
    const message = problem === 'Coupon has reached its usage limit.' ? problem : COUPON_NOT_FOUND;
    throw validationError([{ message: `${label}${message}`, attribute: 'coupon_code' }]);
  }
  return coupon;
}

function unusable(
  coupon: CouponRecord | undefined,
  familyId: number | undefined,
  at: Date,
  checkLimit = true,
): string | undefined {
  if (!coupon || (familyId !== undefined && coupon.familyId !== familyId)) return COUPON_NOT_FOUND;
  if (coupon.archivedAt !== null) return 'Coupon is invalid.';
  if (coupon.endDate !== null && at.getTime() > coupon.endDate.getTime()) return 'Coupon code has expired.';
  if (checkLimit && coupon.conversionLimit !== null && coupon.redemptions >= coupon.conversionLimit) {
    return 'Coupon has reached its usage limit.';
  }
  return undefined;
}

function couponNotFound(): BillingError {
  return new BillingError('not_found', COUPON_NOT_FOUND, { shape: 'string', data: { what: 'coupon' } });
}

type CouponFields = {
  -readonly [K in keyof Omit<
    CouponRecord,
    'id' | 'siteId' | 'familyId' | 'redemptions' | 'createdAt' | 'updatedAt' | 'archivedAt'
  >]?: CouponRecord[K];
};

/**
 * The coupon fields an input sets, checked and collected: on create (`current` undefined) the
 * required ones must be there; on update only what is sent changes, and the merged result must
 * still have exactly one kind of discount.
 */
function couponFields(
  input: CouponInput,
  current: CouponRecord | undefined,
  site: SiteRecord,
  errors: ValidationCollector,
): CouponFields {
  const fields: CouponFields = {};
  if (input.name !== undefined || !current) {
    if (typeof input.name !== 'string' || input.name.trim() === '') errors.add('Name: cannot be blank.', 'name');
    else fields.name = input.name.trim();
  }
  if (input.code !== undefined || !current) {
    const code = errors.capture(() => parseCouponCode(input.code));
    if (code !== undefined) fields.code = code;
  }
  if (input.description !== undefined) {
    if (input.description !== null && typeof input.description !== 'string')
      errors.add('Description: must be a string.', 'description');
    else fields.description = input.description;
  }

  const givesPercentage = input.percentage !== undefined && input.percentage !== null;
  const givesAmount = (input.amountInCents ?? null) !== null || (input.amount ?? null) !== null;
  if (givesPercentage && givesAmount) {
    errors.add('Percentage or amount: only one of them may be set.', 'percentage');
  } else if (givesPercentage) {
    const value = errors.capture(() => parsePercentage(input.percentage, { attribute: 'percentage' }));
    if (value !== undefined) {
      fields.percentage = value.toFixed();
      fields.amountInCents = null;
    }
  } else if (givesAmount) {
    const cents = errors.capture(() => couponAmount(input, site.currency));
    if (cents !== undefined) {
      fields.amountInCents = cents;
      fields.percentage = null;
    }
  } else {
    // Clearing one kind without giving the other would leave a coupon that discounts nothing.
    const clearsPercentage = input.percentage === null && current?.percentage !== null;
    const clearsAmount = (input.amountInCents === null || input.amount === null) && current?.amountInCents !== null;
    if (!current || clearsPercentage || clearsAmount)
      errors.add('Percentage or amount: one of them must be set.', 'percentage');
  }

  if (input.recurring !== undefined) {
    if (typeof input.recurring !== 'boolean') errors.add('Recurring: must be true or false.', 'recurring');
    else fields.recurring = input.recurring;
  }
  if (input.durationPeriodCount !== undefined) {
    fields.durationPeriodCount =
      input.durationPeriodCount === null
        ? null
        : positiveWholeNumber(input.durationPeriodCount, 'Duration period count', 'duration_period_count', errors);
  }
  const recurring = fields.recurring ?? current?.recurring ?? false;
  const duration =
    fields.durationPeriodCount === undefined ? (current?.durationPeriodCount ?? null) : fields.durationPeriodCount;
  if (!recurring && duration !== null) {
    if (input.durationPeriodCount !== undefined) {
      errors.add('Duration period count: can only be set on a recurring coupon.', 'duration_period_count');
    } else {
      // Turning recurring off ends any duration with it.
      fields.durationPeriodCount = null;
    }
  }
  if (input.endDate !== undefined) {
    if (input.endDate === null) fields.endDate = null;
    else {
      const day = errors.capture(() => parseInstant(input.endDate, site.timeZone, 'End date'));
      // The service's rule: the coupon can be added until the end of that day in the site's zone.
      if (day !== undefined) fields.endDate = endOfLocalDay(day, site.timeZone);
    }
  }
  for (const [key, field, attribute] of [
    ['allowNegativeBalance', 'Allow negative balance', 'allow_negative_balance'],
    ['stackable', 'Stackable', 'stackable'],
  ] as const) {
    const value = input[key];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') errors.add(`${field}: must be true or false.`, attribute);
    else fields[key] = value;
  }
  if (input.compoundingStrategy !== undefined) {
    const strategy = input.compoundingStrategy === 'full_price' ? 'full-price' : input.compoundingStrategy;
    if (strategy !== 'compound' && strategy !== 'full-price') {
      errors.add("Compounding strategy: must be 'compound' or 'full-price'.", 'compounding_strategy');
    } else fields.compoundingStrategy = strategy;
  }
  if (input.conversionLimit !== undefined) {
    fields.conversionLimit =
      input.conversionLimit === null
        ? null
        : positiveWholeNumber(input.conversionLimit, 'Conversion limit', 'conversion_limit', errors);
  }
  return fields;
}

/** The flat amount of an input in minor units: `amountInCents`, or `amount` in major units; both must agree. */
function couponAmount(input: CouponInput, currency: string): number {
  const fromCents =
    (input.amountInCents ?? null) === null
      ? undefined
      : parseMinorAmount(input.amountInCents, { field: 'Amount in cents', attribute: 'amount_in_cents' });
  const fromMajor =
    (input.amount ?? null) === null ? undefined : parseMajorAmount(input.amount, currency, { attribute: 'amount' });
  if (fromCents !== undefined && fromMajor !== undefined && fromCents !== fromMajor) {
    throw invalid('Amount: does not match amount in cents.', 'amount');
  }
  return (fromCents ?? fromMajor) as number;
}

/** The id of a family given by id or handle, or a validation message on the collector when there is none. */
async function familyIdOf(
  tx: StorageTransaction,
  siteId: number,
  idOrHandle: number | string,
  errors: ValidationCollector,
): Promise<number | undefined> {
  const family =
    typeof idOrHandle === 'number'
      ? await tx.catalog.findFamily(siteId, idOrHandle)
      : await tx.catalog.findFamilyByHandle(siteId, idOrHandle);
  if (!family) errors.add(`Product family: '${String(idOrHandle)}' does not exist for this site.`, 'product_family_id');
  return family?.id;
}

async function mapCodeConflict<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof BillingError && error.code === 'conflict')
      throw invalid('Code: must be unique - that value has been taken.', 'code');
    throw error;
  }
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const COUPON_METHODS = [
  'create',
  'update',
  'archive',
  'get',
  'findByCode',
  'list',
  'validate',
  'createSubcodes',
  'replaceSubcodes',
  'listSubcodes',
  'deleteSubcode',
  'usage',
  'createOrUpdateCurrencyPrices',
] as const;
