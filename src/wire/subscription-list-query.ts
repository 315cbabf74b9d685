import { z } from 'zod';
import type { SubscriptionListQuery } from '../services/subscription-service.js';
import { isGiven } from './subscription-request.js';
import { isPlainObject } from './wire-request.js';

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

function pageNumber(v: unknown): number | undefined {
  const n = typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : Number.NaN;
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

/**
 * Reads a subscription list query from a parsed query string into a
 * {@link SubscriptionListQuery}: `page`, `per_page`, `state` (one, a comma list, or `state[]=`),
 * `product` (numeric id), `date_field`, `start_date`/`end_date`, `start_datetime`/`end_datetime`,
 * `metadata[name]=value`, `sort` and `direction`. Paging is lenient (the engine clamps); values the
 * engine checks (states, sort and date fields, dates) are passed on for it to judge with its messages.
 * A filter the engine cannot apply (`coupon` by id, price points) is refused rather than ignored,
 * since ignoring a filter would return subscriptions the client excluded.
 */
export const subscriptionListQuery = z
  .record(z.string(), z.unknown())
  .superRefine((q, ctx) => {
    const product = q.product;
    if (isGiven(product) && !(typeof product === 'string' && /^\s*\d+\s*$/.test(product))) {
      ctx.addIssue({ code: 'custom', path: ['product'], message: 'must be a numeric product id.' });
    }
    for (const key of ['coupon', 'product_price_point_id']) {
      if (isGiven(q[key]))
        ctx.addIssue({ code: 'custom', path: [key], message: 'is not supported as a filter by this server yet.' });
    }
  })
  .transform((q): SubscriptionListQuery => {
    const states = (Array.isArray(q.state) ? q.state : typeof q.state === 'string' ? q.state.split(',') : [])
      .map(text)
      .filter((s): s is string => s !== undefined);
    const metadata: Record<string, string> = {};
    if (isPlainObject(q.metadata))
      for (const [name, value] of Object.entries(q.metadata)) if (typeof value === 'string') metadata[name] = value;
    const direction = text(q.direction)?.toLowerCase();
    const product = text(q.product);
    const page = pageNumber(q.page);
    const perPage = pageNumber(q.per_page);
    const dateField = text(q.date_field);
    const sort = text(q.sort);
    const startDate = text(q.start_date);
    const endDate = text(q.end_date);
    const startDatetime = text(q.start_datetime);
    const endDatetime = text(q.end_datetime);
    return {
      ...(states.length === 0 ? {} : { state: states.length === 1 ? states[0] : states }),
      ...(product === undefined ? {} : { productId: Number(product) }),
      // The engine checks these against its closed lists and answers 422 for any other value.
      ...(dateField === undefined ? {} : { dateField: dateField as SubscriptionListQuery['dateField'] }),
      ...(sort === undefined ? {} : { sort: sort as SubscriptionListQuery['sort'] }),
      ...(startDate === undefined ? {} : { startDate }),
      ...(endDate === undefined ? {} : { endDate }),
      ...(startDatetime === undefined ? {} : { startDatetime }),
      ...(endDatetime === undefined ? {} : { endDatetime }),
      ...(Object.keys(metadata).length === 0 ? {} : { metadata }),
      ...(direction === 'asc' || direction === 'desc' ? { direction } : {}),
      ...(page === undefined ? {} : { page }),
      ...(perPage === undefined ? {} : { perPage }),
    };
  });
