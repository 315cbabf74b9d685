import type { CustomerListQuery } from '../services/customer-service.js';
import { pageQuery } from './list-query.js';

/** A query value given as text (trimmed), or undefined: empty pairs and non-text values count as not given. */
export function queryText(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * The paging every list shares: `page` and `per_page` read leniently (bad values mean the defaults,
 * `per_page` clamped to 200) and `direction` as text for the engine to check.
 */
export function listPaging(query: Readonly<Record<string, unknown>>): {
  page: number;
  perPage: number;
  direction?: string;
} {
  const page = pageQuery.parse(query);
  const direction = queryText(query.direction)?.toLowerCase();
  return { page: page.page, perPage: page.perPage, ...(direction === undefined ? {} : { direction }) };
}

/** `GET /customers.json`: paging and direction, `q`, `date_field`, `start_date`, `end_date`, `start_datetime`, `end_datetime`. */
export function customerListInput(query: Readonly<Record<string, unknown>>): CustomerListQuery {
  const fields = {
    q: queryText(query.q),
    dateField: queryText(query.date_field),
    startDate: queryText(query.start_date),
    endDate: queryText(query.end_date),
    startDatetime: queryText(query.start_datetime),
    endDatetime: queryText(query.end_datetime),
  };
  const given = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  return { ...listPaging(query), ...given };
}
