import qs from 'qs';
import { z } from 'zod';

/**
 * Parses a URL query string with the service's bracket conventions (`kinds[]=charge&kinds[]=payment`,
 * `metadata[field]=value`). Empty pairs (`?&per_page=200&state=active&&&&`, which the official SDK
 * sends for every unset optional parameter) are skipped, and the number of pairs and nesting depth
 * are bounded so that a hostile query cannot cost much.
 */
export function parseQueryString(search: string): Record<string, unknown> {
  return qs.parse(search, { ignoreQueryPrefix: true, depth: 3, parameterLimit: 200, arrayLimit: 100 });
}

/** The default page size of lists (reference §8.3). */
export const DEFAULT_PER_PAGE = 20;
/** The largest page size; larger requests are clamped to it, not rejected (reference §8.3). */
export const MAX_PER_PAGE = 200;

// Paging values are read leniently: the service clamps rather than rejects, so a bad value means the default.
function lenientInteger(fallback: number, min: number, max: number) {
  return z
    .unknown()
    .optional()
    .transform((v) => {
      const n = typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : typeof v === 'number' ? v : Number.NaN;
      return Number.isSafeInteger(n) && n >= min ? Math.min(n, max) : fallback;
    });
}

/** A page request read from a query: 1-based `page` and `perPage`, already clamped. */
export interface ListPage {
  readonly page: number;
  readonly perPage: number;
}

/** Reads `page` and `per_page` of any list from a parsed query, leniently (bad values mean the defaults). */
export const pageQuery = z
  .object({
    page: lenientInteger(1, 1, Number.MAX_SAFE_INTEGER),
    per_page: lenientInteger(DEFAULT_PER_PAGE, 1, MAX_PER_PAGE),
  })
  .transform((q): ListPage => ({ page: q.page, perPage: q.per_page }));

/** Query of a transaction list (reference §7.1): paging, sort direction and `kinds[]`. */
export interface TransactionListQuery extends ListPage {
  /** `desc` (newest first, the service's list order) unless `direction=asc`. */
  readonly direction: 'asc' | 'desc';
  /** Transaction types to keep (`kinds[]=charge&kinds[]=payment`); undefined keeps all. */
  readonly kinds?: readonly string[];
}

/** Reads `page`, `per_page`, `direction` and `kinds[]` of a transaction list from a parsed query. */
export const transactionListQuery = z
  .object({
    page: lenientInteger(1, 1, Number.MAX_SAFE_INTEGER),
    per_page: lenientInteger(DEFAULT_PER_PAGE, 1, MAX_PER_PAGE),
    direction: z
      .unknown()
      .optional()
      .transform((v) => (typeof v === 'string' && v.trim().toLowerCase() === 'asc' ? 'asc' : 'desc')),
    kinds: z
      .unknown()
      .optional()
      .transform((v) => {
        const list = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [];
        const kinds = list.filter((k): k is string => typeof k === 'string' && k.trim() !== '').map((k) => k.trim());
        return kinds.length > 0 ? kinds : undefined;
      }),
  })
  .transform(
    (q): TransactionListQuery => ({
      page: q.page,
      perPage: q.per_page,
      direction: q.direction,
      ...(q.kinds === undefined ? {} : { kinds: q.kinds }),
    }),
  );

/** One page of `items` (1-based); a page past the end is empty, as the service answers. */
export function pageOf<T>(items: readonly T[], page: ListPage): T[] {
  const start = (page.page - 1) * page.perPage;
  return start >= items.length ? [] : items.slice(start, start + page.perPage);
}
