import { invalid, notFound } from 'billing-engine';
import { type HttpContext, idParam, stripJsonSuffix } from '../http-context.js';
import { parseQueryString } from '../wire-bridge.js';

/** The request's query string, parsed with the service's bracket conventions (`kinds[]=charge`). */
export function queryOf(c: HttpContext): Record<string, unknown> {
  return parseQueryString(new URL(c.req.url).search);
}

/**
 * A product family named in the path: a numeric id, or `handle:<handle>` as the service's paths
 * allow. Anything else cannot name a family, so it is a 404, not a 422.
 */
export function familyParam(c: HttpContext, name: string): number | string {
  const raw = stripJsonSuffix(c.req.param(name) ?? '');
  if (raw.startsWith('handle:') && raw.length > 'handle:'.length) return raw.slice('handle:'.length);
  if (!/^\d+$/.test(raw)) throw notFound('Product family', raw);
  return idParam(c, name, 'Product family');
}

/**
 * A component named in the path: a numeric id, or `handle:<handle>` as the SDK's paths allow.
 * Anything else cannot name a component, so it is a 404, not a 422.
 */
export function componentParam(c: HttpContext, name: string): number | string {
  const raw = stripJsonSuffix(c.req.param(name) ?? '');
  if (raw.startsWith('handle:') && raw.length > 'handle:'.length) return raw.slice('handle:'.length);
  return idParam(c, name, 'Component');
}

/**
 * Refuses list parameters the route does not apply (a 422 naming the first), since ignoring a
 * filter would hand back records the client did not ask for.
 */
export function refuseUnappliedFilters(query: Readonly<Record<string, unknown>>, names: readonly string[]): void {
  for (const name of names) {
    const value = query[name];
    const given = typeof value === 'string' ? value.trim() !== '' : value !== undefined && value !== null;
    if (given) throw invalid(`${name}: filtering this list is not supported by this server yet.`, name);
  }
}

/** The list filters of the SDK's listProducts and listComponents that those routes do not apply. */
export const CATALOG_LIST_FILTERS = [
  'filter',
  'date_field',
  'start_date',
  'end_date',
  'start_datetime',
  'end_datetime',
  'include',
] as const;
