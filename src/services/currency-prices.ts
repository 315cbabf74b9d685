/**
 * Currency prices under the spec's one-currency rule ("A site has exactly one currency").
 *
 * The service keeps prices of a price point or an amount coupon in further currencies only for a
 * currency "that has been defined on the site level in your settings" besides the site's own. A
 * site here defines no other currency, so every request is answered as the service answers a site
 * with no extra currencies: the request is read and checked (bounded), the record is looked up
 * (404), the record's own refusals come next (a custom price point, a percentage coupon), and any
 * request that passes them is refused naming each currency it gives: the site's own currency is the
 * record's primary pricing, and any other currency is not defined on the site. Nothing is written.
 *
 * This module holds the checks shared by the price point and coupon commands and the signup's
 * `currency` field; the commands themselves live with their records.
 */
import { assertCurrency, parseMajorAmount, parseWireDecimal } from '../domain/money/index.js';
import { type BillingErrorDetail, isBillingError, ValidationCollector, validationError } from '../errors.js';
import type { SiteRecord } from '../ports/storage.js';

/** The most currency prices one request may carry (more currencies than ISO 4217 has in use is never needed). */
export const MAX_CURRENCY_PRICES = 100;

/** What a product currency price prices: the recurring price, the trial price or the initial (setup) charge. */
export type CurrencyPriceRole = 'baseline' | 'trial' | 'initial';

/** The roles of {@link CurrencyPriceRole}, in the service's order. */
export const CURRENCY_PRICE_ROLES: readonly CurrencyPriceRole[] = ['baseline', 'trial', 'initial'];

/** One price of a product price point in another currency (`POST /product_price_points/{id}/currency_prices.json`). */
export interface ProductCurrencyPriceInput {
  /** ISO 4217 code, any letter case. */
  readonly currency?: string;
  /** Major units of that currency (`100`, `"99.50"`). */
  readonly price?: number | string;
  readonly role?: CurrencyPriceRole | string;
}

/** One price of a component price point's bracket in another currency (`POST /price_points/{id}/currency_prices.json`). */
export interface ComponentCurrencyPriceInput {
  readonly currency?: string;
  /** A unit price in major units, up to four decimal places, as component prices take them. */
  readonly price?: number | string;
  /** The id of the price bracket it mirrors. */
  readonly priceId?: number | string;
}

/** One price of an amount coupon in another currency (`PUT /coupons/{id}/currency_prices.json`). */
export interface CouponCurrencyPriceInput {
  readonly currency?: string;
  /** Major units of that currency. */
  readonly price?: number | string;
}

/** A new price for an existing currency price, by its id (the `PUT` of a price point's currency prices). */
export interface CurrencyPriceUpdateInput {
  readonly id?: number | string;
  readonly price?: number | string;
}

/** The most decimal places of any currency's minor unit, and of a component unit price. */
const MAX_PRICE_PLACES = 4;

/**
 * Checks the list of a currency-price request: a non-empty list of at most {@link MAX_CURRENCY_PRICES}
 * entries, each checked by `entry` (which records its problems and answers a key when the entry is
 * good); a key given twice is refused with `duplicate(key)`. Every problem is reported at once,
 * each message once, as a map of field to messages (the shape the SDK reads for these endpoints).
 */
function checkList<T>(
  list: readonly T[],
  entry: (item: T, errors: ValidationCollector) => string | undefined,
  duplicate: (key: string) => string,
): void {
  const errors = new ValidationCollector();
  if (!Array.isArray(list) || list.length === 0) {
    errors.add('Currency prices: must be a non-empty list.', 'currency_prices');
  } else if (list.length > MAX_CURRENCY_PRICES) {
    errors.add(`Currency prices: at most ${MAX_CURRENCY_PRICES} can be given at once.`, 'currency_prices');
  } else {
    const keys = new Set<string>();
    for (const item of list) {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) {
        errors.add('Currency prices: each entry must be an object.', 'currency_prices');
        continue;
      }
      const key = entry(item, errors);
      if (key === undefined) continue;
      if (keys.has(key)) errors.add(duplicate(key), 'currency_prices');
      keys.add(key);
    }
  }
  throwUnique(errors);
}

/** Throws the collected problems as one 422, each message once, keyed by field. */
function throwUnique(errors: ValidationCollector): void {
  try {
    errors.throwIfAny();
  } catch (error) {
    if (!isBillingError(error)) throw error;
    const seen = new Set<string>();
    const details = error.details.filter((d) => {
      const key = `${d.attribute ?? ''}\u0000${d.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    throw validationError(details, 'map');
  }
}

/** A currency code read from a request (upper-cased), or undefined with the problem recorded. */
function currencyOf(value: unknown, errors: ValidationCollector): string | undefined {
  if (value === undefined || value === null || value === '') {
    errors.add('Currency: cannot be blank.', 'currency');
    return undefined;
  }
  if (typeof value !== 'string' || !/^[A-Za-z]{3}$/.test(value.trim())) {
    errors.add('Currency: must be a three-letter ISO 4217 code.', 'currency');
    return undefined;
  }
  return errors.capture(() => assertCurrency(value.trim()));
}

/** A price in major units of `currency` (bounded: a safe integer of minor units), or the problem recorded. */
function majorPriceOf(value: unknown, currency: string | undefined, errors: ValidationCollector): void {
  if (value === undefined || value === null || value === '') {
    errors.add('Price: cannot be blank.', 'price');
    return;
  }
  if (currency === undefined) {
    // Without a currency its decimal places are unknown: check what does not depend on them.
    decimalPriceOf(value, errors);
    return;
  }
  errors.capture(() => parseMajorAmount(value, currency, { field: 'Price', attribute: 'price' }));
}

/**
 * A price whose currency is not known (an update names a currency price by id) or a component
 * unit price: a decimal of at least 0 with at most four places, small enough to be kept exactly.
 */
function decimalPriceOf(value: unknown, errors: ValidationCollector): void {
  if (value === undefined || value === null || value === '') {
    errors.add('Price: cannot be blank.', 'price');
    return;
  }
  const decimal = errors.capture(() => parseWireDecimal(value, { field: 'Price', attribute: 'price' }));
  if (decimal === undefined) return;
  if (decimal.isNegative()) errors.add('Price: must be greater than or equal to 0.', 'price');
  else if (decimal.decimalPlaces() > MAX_PRICE_PLACES)
    errors.add(`Price: must have at most ${MAX_PRICE_PLACES} decimal places.`, 'price');
  else if (!Number.isSafeInteger(decimal.times(10 ** MAX_PRICE_PLACES).toNumber()))
    errors.add('Price: is too large.', 'price');
}

/** A positive whole number (a number or a string of digits), or undefined with the problem recorded. */
function idOf(value: unknown, field: string, attribute: string, errors: ValidationCollector): number | undefined {
  const id =
    typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (value === undefined || value === null || value === '') errors.add(`${field}: cannot be blank.`, attribute);
  else if (!Number.isSafeInteger(id) || id < 1)
    errors.add(`${field}: must be a whole number greater than 0.`, attribute);
  else return id;
  return undefined;
}

/**
 * Checks the entries of a product price point's currency prices and answers their currencies in
 * the order given (each once). 422 (a map of field to messages) for anything else.
 */
export function checkProductCurrencyPrices(list: readonly ProductCurrencyPriceInput[]): string[] {
  const currencies: string[] = [];
  checkList(
    list,
    (item, errors) => {
      const currency = currencyOf(item.currency, errors);
      majorPriceOf(item.price, currency, errors);
      const role = item.role;
      if (role === undefined || role === null || role === '') errors.add('Role: cannot be blank.', 'role');
      else if (!CURRENCY_PRICE_ROLES.includes(role as CurrencyPriceRole))
        errors.add(`Role: must be one of ${CURRENCY_PRICE_ROLES.join(', ')}.`, 'role');
      else if (currency !== undefined) {
        if (!currencies.includes(currency)) currencies.push(currency);
        return `${currency} ${role}`;
      }
      return undefined;
    },
    (key) => `Currency prices: ${key} is given more than once.`,
  );
  return currencies;
}

/** Checks the entries of a component price point's currency prices and answers their currencies (each once). */
export function checkComponentCurrencyPrices(list: readonly ComponentCurrencyPriceInput[]): string[] {
  const currencies: string[] = [];
  checkList(
    list,
    (item, errors) => {
      const currency = currencyOf(item.currency, errors);
      decimalPriceOf(item.price, errors);
      const priceId = idOf(item.priceId, 'Price id', 'price_id', errors);
      if (currency === undefined || priceId === undefined) return undefined;
      if (!currencies.includes(currency)) currencies.push(currency);
      return `${currency} for price ${priceId}`;
    },
    (key) => `Currency prices: ${key} is given more than once.`,
  );
  return currencies;
}

/** Checks the entries of a coupon's currency prices and answers their currencies (each once). */
export function checkCouponCurrencyPrices(list: readonly CouponCurrencyPriceInput[]): string[] {
  const currencies: string[] = [];
  checkList(
    list,
    (item, errors) => {
      const currency = currencyOf(item.currency, errors);
      majorPriceOf(item.price, currency, errors);
      if (currency === undefined) return undefined;
      if (!currencies.includes(currency)) currencies.push(currency);
      return currency;
    },
    (key) => `Currency prices: ${key} is given more than once.`,
  );
  return currencies;
}

/** Checks the entries of a currency price update (`{id, price}`) and answers their ids (each once). */
export function checkCurrencyPriceUpdates(list: readonly CurrencyPriceUpdateInput[]): number[] {
  const ids: number[] = [];
  checkList(
    list,
    (item, errors) => {
      const id = idOf(item.id, 'Id', 'id', errors);
      decimalPriceOf(item.price, errors);
      if (id === undefined) return undefined;
      if (!ids.includes(id)) ids.push(id);
      return String(id);
    },
    (key) => `Currency prices: currency price ${key} is given more than once.`,
  );
  return ids;
}

/**
 * The refusal of currency prices in `currencies` for a record of `site` (`what`: "price point",
 * "coupon"), one message per currency: the site's own currency is the record's primary pricing,
 * and any other currency is not defined on the site (a site has exactly one). Always throws.
 */
export function refuseCurrencies(site: SiteRecord, currencies: readonly string[], what: string): never {
  const details: BillingErrorDetail[] = currencies.map((currency) => ({
    attribute: 'currency',
    message:
      currency === site.currency
        ? `Currency: ${currency} is the site's currency, the ${what}'s primary pricing; it cannot be added as a currency price.`
        : `Currency: ${currency} is not defined on the site; the site's only currency is ${site.currency}.`,
  }));
  throw validationError(details, 'map');
}

/**
 * The refusal of updates to currency prices `ids`: a site defines no currency besides its own, so
 * no price point has a currency price to update. Always throws (422, one message per id).
 */
export function refuseCurrencyPriceUpdates(site: SiteRecord, ids: readonly number[]): never {
  const details: BillingErrorDetail[] = ids.map((id) => ({
    attribute: 'id',
    message: `Currency price ${id}: does not exist on this price point; the site's only currency is ${site.currency}, so it has no currency prices.`,
  }));
  throw validationError(details, 'map');
}

/**
 * The signup's `currency` (`CreateSubscription.currency`): the site's currency in any letter case
 * passes; blank means the site's. Any other currency is recorded as a problem, so the signup is
 * refused before anything is written or charged.
 */
export function checkSignupCurrency(value: unknown, site: SiteRecord, errors: ValidationCollector): void {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return;
  if (typeof value !== 'string' || !/^[A-Za-z]{3}$/.test(value.trim())) {
    errors.add('Currency: must be a three-letter ISO 4217 code.', 'currency');
    return;
  }
  const currency = value.trim().toUpperCase();
  if (currency === site.currency) return;
  errors.add(
    `Currency: ${currency} is not defined on the site; subscriptions on this site are billed in ${site.currency}.`,
    'currency',
  );
}
