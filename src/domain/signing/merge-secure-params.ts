import type { FormParams, FormValue } from './form-params.js';

function isObject(value: FormValue | undefined): value is FormParams {
  return typeof value === 'object' && !Array.isArray(value);
}

function deepMerge(base: FormParams, override: FormParams, skipKey?: string): FormParams {
  const merged: Record<string, FormValue> = {};
  for (const [key, value] of Object.entries(base)) {
    // Assigning "__proto__" on a plain object would swap its prototype instead of adding a field.
    if (key !== '__proto__' && key !== skipKey) merged[key] = value;
  }
  for (const [key, value] of Object.entries(override)) {
    if (key === '__proto__') continue;
    const existing = merged[key];
    merged[key] = isObject(existing) && isObject(value) ? deepMerge(existing, value) : value;
  }
  return merged;
}

/**
 * The parameters a direct-post request is processed with: the normal form params deep-merged with the
 * parsed `secure[data]`, where a secure value overrides the normal value at the same path
 * (`signup[product][handle]` from secure data beats the form field). Objects merge key by key;
 * any other value, lists included, is replaced whole so a form field cannot append to a signed list.
 * A top-level `redirect_uri` in the normal params is dropped because the service reads it only from
 * secure data; otherwise anyone could redirect a signed post anywhere. Inputs are
 * not modified.
 */
export function mergeSecureParams(normal: FormParams, secure: FormParams): FormParams {
  return deepMerge(normal, secure, 'redirect_uri');
}

/**
 * What a customer types into a signup form, by `signup[...]` group: names, contact details and the
 * address, and the card with its billing address. Nothing here selects a product, a price, a
 * customer record, a coupon, a component or a date, so none of it can change what is charged or
 * when. Anything not listed is the merchant's to decide: see {@link unsignedBillingFields}.
 */
export const CUSTOMER_TYPED_SIGNUP_FIELDS: Readonly<Record<string, ReadonlySet<string>>> = {
  customer: new Set([
    'first_name',
    'last_name',
    'email',
    'phone',
    'organization',
    'address',
    'address_2',
    'city',
    'state',
    'zip',
    'country',
  ]),
  payment_profile: new Set([
    'first_name',
    'last_name',
    'card_number',
    'expiration_month',
    'expiration_year',
    'cvv',
    'billing_address',
    'billing_address_2',
    'billing_city',
    'billing_state',
    'billing_zip',
    'billing_country',
  ]),
};

/** A field of a parsed form as its path of keys: `['signup', 'product', 'id']` for `signup[product][id]`. */
export type FormPath = readonly string[];

/** Whether a path inside `signup` (`['customer', 'email']`) is a customer-typed field or lies under one. */
function customerTyped(path: FormPath): boolean {
  const [group, field] = path;
  return group !== undefined && field !== undefined && CUSTOMER_TYPED_SIGNUP_FIELDS[group]?.has(field) === true;
}

/** Every leaf under `value` (text and lists are leaves; objects are walked), as paths relative to it. */
function leafPaths(value: FormValue, prefix: readonly string[], out: string[][]): string[][] {
  if (!isObject(value)) {
    out.push([...prefix]);
    return out;
  }
  for (const [key, item] of Object.entries(value)) leafPaths(item, [...prefix, key], out);
  return out;
}

/**
 * Whether the merge replaces the unsigned value at `path`: secure data has a value there, or a
 * text or list on the way there (which {@link mergeSecureParams} puts in place of the whole subtree).
 */
function overridden(secure: FormValue, path: FormPath): boolean {
  let current: FormValue = secure;
  for (const key of path) {
    if (!isObject(current)) return true;
    const next: FormValue | undefined = Object.hasOwn(current, key) ? current[key] : undefined;
    if (next === undefined) return false;
    current = next;
  }
  return true;
}

/**
 * The unsigned signup fields a direct post may not send: an allowlist, not a denylist. When the
 * merchant's secure data signs anything in `signup` beyond customer-typed fields (a product, a
 * price, a customer record, a coupon, components, a date), the merchant has fixed the bill, so
 * every unsigned `signup[...]` field that would take effect must be one the customer types
 * ({@link CUSTOMER_TYPED_SIGNUP_FIELDS}); anything else (`signup[product][id]` beside a signed
 * handle, `signup[customer][id]`, `signup[coupon_code]`, `signup[subscription][next_billing_at]`,
 * components, metafields, fields this list does not know) is returned, paths starting at `signup`.
 * A field that secure data overrides takes no effect and is not
 * returned. When secure data signs nothing of the bill, the form is the merchant's unsigned form
 * (the spec shows `signup[product][handle]` as a normal field) and nothing is returned. Fields
 * outside `signup` are never read by a signup and are not judged. Pure; inputs are not modified.
 */
export function unsignedBillingFields(normal: FormParams, secure: FormParams): FormPath[] {
  const signed = Object.hasOwn(secure, 'signup') ? secure.signup : undefined;
  if (signed === undefined) return [];
  const signsBill = !isObject(signed) || leafPaths(signed, [], []).some((path) => !customerTyped(path));
  const unsigned = Object.hasOwn(normal, 'signup') ? normal.signup : undefined;
  if (!signsBill || unsigned === undefined) return [];
  return leafPaths(unsigned, [], [])
    .filter((path) => !customerTyped(path) && !overridden(signed, path))
    .map((path) => ['signup', ...path]);
}
