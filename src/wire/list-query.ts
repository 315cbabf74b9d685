import qs from 'qs';
import { z } from 'zod';
import type { TransactionListInput } from '../services/ledger-service.js';

/**
 * Parses a URL query string with the service's bracket conventions (`kinds[]=charge&kinds[]=payment`,
 * `metadata[field]=value`). Empty pairs (`?&per_page=200&state=active&&&&`, which the official SDK
 * sends for every unset optional parameter) are skipped, and the number of pairs and nesting depth
 * are bounded so that a hostile query cannot cost much.
 */
export function parseQueryString(search: string): Record<string, unknown> {
  return qs.parse(search, { ignoreQueryPrefix: true, depth: 3, parameterLimit: 200, arrayLimit: 100 });
}

/** The default page size of lists. */
export const DEFAULT_PER_PAGE = 20;
/** The largest page size; larger requests are clamped to it, not rejected. */
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

/** Query of a transaction list: paging, sort direction and `kinds[]`. */
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

/**
 * A page query with its own default page size: the same lenient reading as {@link pageQuery}, for
 * lists whose default is not 20 (coupons 30).
 */
export function pageQueryWithDefault(defaultPerPage: number) {
  return z
    .object({
      page: lenientInteger(1, 1, Number.MAX_SAFE_INTEGER),
      per_page: lenientInteger(defaultPerPage, 1, MAX_PER_PAGE),
    })
    .transform((q): ListPage => ({ page: q.page, perPage: q.per_page }));
}

/** `GET /coupons.json` paging: 30 a page by default, at most 200. */
export const couponListQuery = pageQueryWithDefault(30);

function queryText(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/**
 * Reads a ledger transaction list query from a parsed query string into the
 * engine's {@link TransactionListInput}: `kinds[]` (transaction types: `charge`, `payment`, ...),
 * `since_id`, `max_id`, `since_date`, `until_date`, `order_by`, `direction`, `page`, `per_page`.
 * Paging is lenient as on every list; the filters are passed on as text for the engine to check
 * with its messages (an unknown type, a bad date). Values that are not text at all
 * (`direction[]=asc`, `kinds[][x]=1`) count as not given, as empty pairs do.
 */
export const transactionListParams = z
  .object({
    page: lenientInteger(1, 1, Number.MAX_SAFE_INTEGER),
    per_page: lenientInteger(DEFAULT_PER_PAGE, 1, MAX_PER_PAGE),
    kinds: z.unknown().optional(),
    since_id: z.unknown().optional(),
    max_id: z.unknown().optional(),
    since_date: z.unknown().optional(),
    until_date: z.unknown().optional(),
    order_by: z.unknown().optional(),
    direction: z.unknown().optional(),
  })
  .transform((q): TransactionListInput => {
    const list = Array.isArray(q.kinds) ? q.kinds : typeof q.kinds === 'string' ? q.kinds.split(',') : [];
    const types = list.map(queryText).filter((k): k is string => k !== undefined);
    const text = {
      sinceId: queryText(q.since_id),
      maxId: queryText(q.max_id),
      sinceDate: queryText(q.since_date),
      untilDate: queryText(q.until_date),
      orderBy: queryText(q.order_by),
      direction: queryText(q.direction)?.toLowerCase(),
    };
    const given = Object.fromEntries(Object.entries(text).filter(([, v]) => v !== undefined));
    return { page: q.page, perPage: q.per_page, ...(types.length === 0 ? {} : { types }), ...given };
  });
