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
 * parsed `secure[data]`, where a secure value overrides the normal value at the same path (spec §4
 * rule 3; `signup[product][handle]` from secure data beats the form field). Objects merge key by key;
 * any other value, lists included, is replaced whole so a form field cannot append to a signed list.
 * A top-level `redirect_uri` in the normal params is dropped because the service reads it only from
 * secure data (spec §4 rule 4); otherwise anyone could redirect a signed post anywhere. Inputs are
 * not modified.
 */
export function mergeSecureParams(normal: FormParams, secure: FormParams): FormParams {
  return deepMerge(normal, secure, 'redirect_uri');
}
