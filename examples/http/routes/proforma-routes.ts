import type { Hono } from 'hono';
// The proforma wire modules are not (yet) exported by `billing-engine/chargify`, whose export list a
// snapshot test guards; they are reached directly, as the invoice routes reach theirs.
import { invoiceVoidRequest } from '../../../src/wire/invoice-request.js';
import { readProformaListQuery, readSignupProformaInclude } from '../../../src/wire/proforma-request.js';
import {
  proformaInvoiceJson,
  serializeProformaInvoiceList,
  serializeSignupProformaPreview,
} from '../../../src/wire/serialize-proforma-invoice.js';
import {
  type HttpAppEnv,
  type HttpContext,
  idParam,
  JSON_SEGMENT,
  readJsonBody,
  sendJson,
  wireContext,
} from '../http-context.js';
import { createSubscriptionRequest, parseWireRequest } from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/** A proforma invoice uid from the path, without its `.json` suffix. */
function uidParam(c: HttpContext): string {
  return (c.req.param('uid') ?? '').replace(/\.json$/, '');
}

/**
 * Proforma invoices in the hosted service's shapes (the official SDK's `ProformaInvoicesController`
 * without subscription groups): creates, reads, voids and subscription previews answer the bare
 * proforma invoice, the list `{"proforma_invoices":[...],"meta":{...}}` and the signup preview
 * `{"proforma_invoice_preview":{...}}`. Registered before the subscription routes, whose
 * `/subscriptions/{id}.json` would otherwise read `proforma_invoices` as an id.
 */
export function registerProformaRoutes(app: Hono<HttpAppEnv>): void {
  // A signup's proforma invoice: the body of a signup; kept, with no subscription.
  app.post('/subscriptions/proforma_invoices.json', async (c) => {
    const input = parseWireRequest(createSubscriptionRequest, await readJsonBody(c));
    const created = await c.var.site.proformaInvoices.createSignup(input);
    return sendJson(201, proformaInvoiceJson(created, await wireContext(c)));
  });

  // `?include=next_proforma_invoice` adds the first renewal; nothing is kept.
  app.post('/subscriptions/proforma_invoices/preview.json', async (c) => {
    const options = readSignupProformaInclude(queryOf(c));
    const input = parseWireRequest(createSubscriptionRequest, await readJsonBody(c));
    const preview = await c.var.site.proformaInvoices.previewSignup(input, options);
    return sendJson(200, serializeSignupProformaPreview(preview, await wireContext(c)));
  });

  app.post('/subscriptions/:id/proforma_invoices.json', async (c) => {
    const created = await c.var.site.proformaInvoices.create(idParam(c, 'id', 'Subscription'));
    return sendJson(201, proformaInvoiceJson(created, await wireContext(c)));
  });

  app.get('/subscriptions/:id/proforma_invoices.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const { query, breakdowns } = readProformaListQuery(queryOf(c));
    const page = await c.var.site.proformaInvoices.list(id, query);
    return sendJson(200, serializeProformaInvoiceList(page, await wireContext(c), breakdowns));
  });

  app.post('/subscriptions/:id/proforma_invoices/preview.json', async (c) => {
    const preview = await c.var.site.proformaInvoices.preview(idParam(c, 'id', 'Subscription'));
    return sendJson(200, proformaInvoiceJson(preview, await wireContext(c)));
  });

  app.get(`/proforma_invoices/:uid${JSON_SEGMENT}`, async (c) => {
    const proforma = await c.var.site.proformaInvoices.get(uidParam(c));
    return sendJson(200, proformaInvoiceJson(proforma, await wireContext(c)));
  });

  // Body `{"void":{"reason":"..."}}`; the reason is required.
  app.post('/proforma_invoices/:uid/void.json', async (c) => {
    const { reason } = parseWireRequest(invoiceVoidRequest, await readJsonBody(c));
    const voided = await c.var.site.proformaInvoices.void(uidParam(c), reason);
    return sendJson(200, proformaInvoiceJson(voided, await wireContext(c)));
  });
}
