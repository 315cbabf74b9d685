import { notFound } from 'billing-engine';
import { type HttpContext, idParam, stripJsonSuffix } from '../http-context.js';
import { parseQueryString } from '../wire-bridge.js';

/** The request's query string, parsed with the service's bracket conventions (`kinds[]=charge`). */
export function queryOf(c: HttpContext): Record<string, unknown> {
  return parseQueryString(new URL(c.req.url).search);
}

/**
 * A product family named in the path: a numeric id, or `handle:<handle>` as the service's paths
 * allow (reference §6). Anything else cannot name a family, so it is a 404, not a 422.
 */
export function familyParam(c: HttpContext, name: string): number | string {
  const raw = stripJsonSuffix(c.req.param(name) ?? '');
  if (raw.startsWith('handle:') && raw.length > 'handle:'.length) return raw.slice('handle:'.length);
  if (!/^\d+$/.test(raw)) throw notFound('Product family', raw);
  return idParam(c, name, 'Product family');
}
