import { invalid } from '../errors.js';
import type { ProformaListQuery, ProformaStatus } from '../invoices/proforma-model.js';
import { queryText } from './api-list-queries.js';
import { pageQuery } from './list-query.js';
import type { ProformaBreakdowns } from './serialize-proforma-invoice.js';

/**
 * Queries of the proforma invoice endpoints (the official SDK's `listProformaInvoices` and
 * `previewSignupProformaInvoice` parameters). Paging is lenient as on every list; `status`,
 * `direction`, `start_date` and `end_date` are passed on as written for the engine to check, so
 * that a filter that cannot match is a 422 rather than an empty page.
 */

/** A breakdown flag as the SDK sends it (`line_items=true`); `1` counts too. */
function flag(value: unknown): boolean {
  const text = queryText(Array.isArray(value) && value.length === 1 ? value[0] : value)?.toLowerCase();
  return text === 'true' || text === '1';
}

/** Reads `GET /subscriptions/{id}/proforma_invoices.json`'s query: the filters and the breakdowns to write. */
export function readProformaListQuery(query: Readonly<Record<string, unknown>>): {
  query: ProformaListQuery;
  breakdowns: ProformaBreakdowns;
} {
  const page = pageQuery.parse(query);
  const status = queryText(query.status);
  const startDate = queryText(query.start_date);
  const endDate = queryText(query.end_date);
  const direction = queryText(query.direction)?.toLowerCase();
  return {
    query: {
      page: page.page,
      perPage: page.perPage,
      ...(status === undefined ? {} : { status: status as ProformaStatus }),
      ...(startDate === undefined ? {} : { startDate }),
      ...(endDate === undefined ? {} : { endDate }),
      ...(direction === undefined ? {} : { direction: direction as 'asc' | 'desc' }),
    },
    breakdowns: {
      lineItems: flag(query.line_items),
      discounts: flag(query.discounts),
      taxes: flag(query.taxes),
      credits: flag(query.credits),
      payments: flag(query.payments),
      customFields: flag(query.custom_fields),
    },
  };
}

/** Reads `include` of a signup proforma preview: `next_proforma_invoice` or nothing. */
export function readSignupProformaInclude(query: Readonly<Record<string, unknown>>): { includeNext: boolean } {
  const include = queryText(query.include);
  if (include === undefined) return { includeNext: false };
  if (include !== 'next_proforma_invoice') throw invalid('Include: must be next_proforma_invoice.', 'include');
  return { includeNext: true };
}
