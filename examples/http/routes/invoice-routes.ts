import { invalid } from 'billing-engine';
import type { Hono } from 'hono';
// The invoice wire modules are not (yet) exported by `billing-engine/chargify`, whose export list a
// snapshot test guards; they are reached directly until they are added there.
import {
  asInvoiceErrorMap,
  invoiceVoidRequest,
  readAdhocInvoice,
  readCreditNoteListQuery,
  readInvoiceEventQuery,
  readInvoiceListQuery,
  readInvoicePayment,
  readInvoiceRefund,
  readMultiInvoicePayment,
} from '../../../src/wire/invoice-request.js';
import { creditNoteJson, serializeCreditNoteList } from '../../../src/wire/serialize-credit-note.js';
import {
  invoiceJson,
  serializeCustomerChanges,
  serializeInvoice,
  serializeInvoiceEvents,
  serializeInvoiceList,
  serializeMultiInvoicePayment,
} from '../../../src/wire/serialize-invoice.js';
import { serializeStatement } from '../../../src/wire/serialize-statement.js';
import {
  type HttpAppEnv,
  type HttpContext,
  idParam,
  JSON_SEGMENT,
  readJsonBody,
  sendJson,
  wireContext,
} from '../http-context.js';
import { listPaging, pageOf, pageQuery, parseWireRequest } from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/** Route pattern of a last path segment that ends in `.pdf`. */
const PDF_SEGMENT = '{[^/]+\\.pdf}';
/** Route pattern of a last path segment that ends in `.html`. */
const HTML_SEGMENT = '{[^/]+\\.html}';

/** A document uid from the path, without its format suffix (`inv_abc.pdf` → `inv_abc`). */
function uidParam(c: HttpContext, name: string): string {
  return (c.req.param(name) ?? '').replace(/\.(json|pdf|html)$/, '');
}

/**
 * A PDF download: `inline` so that a browser shows it, with a file name a person recognises. The
 * name is the document number with anything but letters, digits, `-` and `_` dropped, so it can
 * never break the header.
 */
function pdfResponse(bytes: Uint8Array, number: string): Response {
  const name = number.replace(/[^A-Za-z0-9_-]/g, '') || 'document';
  return new Response(bytes, {
    status: 200,
    headers: {
      'content-type': 'application/pdf',
      'content-disposition': `inline; filename="${name}.pdf"`,
      'cache-control': 'private, no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}

/**
 * Invoices, credit notes and statements in the hosted service's shapes (the official SDK's
 * `InvoicesController`): reads answer the bare invoice or credit note, lists `{"invoices":[...]}`
 * and `{"credit_notes":[...]}`, and the ad-hoc invoice `{"invoice":{...}}` (201), each as the
 * SDK's response model expects. `.pdf` paths answer the rendered document. Amounts in request
 * bodies are major units of the site's currency.
 */
export function registerInvoiceRoutes(app: Hono<HttpAppEnv>): void {
  app.get('/invoices.json', async (c) => {
    const query = readInvoiceListQuery(queryOf(c));
    const { invoices } = await c.var.site.invoices.list(query);
    return sendJson(200, serializeInvoiceList(invoices, await wireContext(c)));
  });

  // The SDK's `listInvoiceEvents` reads `/invoices/events.json?invoice_uid=`: before `/invoices/{uid}.json`,
  // whose pattern it also fits.
  app.get('/invoices/events.json', async (c) => {
    const query = readInvoiceEventQuery(queryOf(c));
    if (query.invoiceUid === undefined) {
      throw invalid('Invoice uid: is required; this server lists the events of one invoice at a time.', 'invoice_uid');
    }
    return sendJson(200, await eventsBody(c, query.invoiceUid, query));
  });

  app.get('/invoices/:uid/events.json', async (c) => {
    const query = readInvoiceEventQuery(queryOf(c));
    return sendJson(200, await eventsBody(c, uidParam(c, 'uid'), query));
  });

  app.get(`/invoices/:uid${JSON_SEGMENT}`, async (c) => {
    const invoice = await c.var.site.invoices.get(uidParam(c, 'uid'));
    return sendJson(200, invoiceJson(invoice, await wireContext(c)));
  });

  app.get(`/invoices/:uid${PDF_SEGMENT}`, async (c) => {
    const uid = uidParam(c, 'uid');
    const invoice = await c.var.site.invoices.get(uid);
    return pdfResponse(await c.var.site.invoices.render(uid, 'pdf'), invoice.number ?? 'draft');
  });

  app.get(`/invoices/:uid${HTML_SEGMENT}`, async (c) => {
    const page = await c.var.site.invoices.render(uidParam(c, 'uid'), 'html');
    return new Response(page, {
      status: 200,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'private, no-store',
        'x-content-type-options': 'nosniff',
        // The page is the engine's own escaped markup with an inline stylesheet and no script.
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      },
    });
  });

  // The SDK's sendInvoice: the invoice by email (its HTML, with the PDF attached), queued for the
  // worker; the service answers 204. Without a mailer configured: 422, nothing queued.
  app.post('/invoices/:uid/deliveries.json', async (c) => {
    const body = await readJsonBody(c);
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw invalid('Request body: must be a JSON object.');
    }
    const fields = (body ?? {}) as Record<string, unknown>;
    await c.var.site.mail.sendInvoice(uidParam(c, 'uid'), {
      recipientEmails: fields.recipient_emails,
      ccRecipientEmails: fields.cc_recipient_emails,
      bccRecipientEmails: fields.bcc_recipient_emails,
    });
    return new Response(null, { status: 204 });
  });

  // The SDK's listConsolidatedInvoiceSegments. Invoices are never consolidated here (subscription
  // groups are not modelled), so a real invoice has no segments: an empty page; an unknown one 404s.
  app.get('/invoices/:uid/segments.json', async (c) => {
    const paging = listPaging(queryOf(c));
    await c.var.site.invoices.get(uidParam(c, 'uid'));
    return sendJson(200, { invoices: [], page: paging.page, per_page: paging.perPage, total_pages: 0 });
  });

  app.post('/invoices/:uid/void.json', async (c) => {
    const { reason } = parseWireRequest(invoiceVoidRequest, await readJsonBody(c));
    const invoice = await c.var.site.invoices.void(uidParam(c, 'uid'), reason);
    return sendJson(200, invoiceJson(invoice, await wireContext(c)));
  });

  // One payment received outside the gateway for several invoices (the SDK's recordPaymentForMultipleInvoices).
  app.post('/invoices/payments.json', async (c) => {
    const context = await wireContext(c);
    const input = readMultiInvoicePayment(await readJsonBody(c), context.currency);
    const result = await c.var.site.invoices.recordMultiplePayment(input);
    return sendJson(201, serializeMultiInvoicePayment(result));
  });

  app.post('/invoices/:uid/customer_information/preview.json', async (c) => {
    const changes = await c.var.site.invoices.previewCustomerInformation(uidParam(c, 'uid'));
    return sendJson(200, serializeCustomerChanges(changes));
  });

  app.put('/invoices/:uid/customer_information.json', async (c) => {
    const context = await wireContext(c);
    const invoice = await c.var.site.invoices.updateCustomerInformation(uidParam(c, 'uid'));
    return sendJson(200, invoiceJson(invoice, context));
  });

  app.post('/invoices/:uid/payments.json', async (c) => {
    const context = await wireContext(c);
    const input = readInvoicePayment(await readJsonBody(c), context.currency);
    const invoice = await c.var.site.invoices.recordPayment(uidParam(c, 'uid'), input);
    return sendJson(200, invoiceJson(invoice, context));
  });

  app.post('/invoices/:uid/refunds.json', async (c) => {
    const context = await wireContext(c);
    const input = readInvoiceRefund(await readJsonBody(c), context.currency);
    const { invoice } = await c.var.site.invoices.refund(uidParam(c, 'uid'), input);
    return sendJson(200, invoiceJson(invoice, context));
  });

  app.post('/invoices/:uid/reopen.json', async (c) => {
    const invoice = await c.var.site.invoices.reopen(uidParam(c, 'uid'));
    return sendJson(200, invoiceJson(invoice, await wireContext(c)));
  });

  app.post('/invoices/:uid/issue.json', async (c) => {
    // The body (`on_failed_payment`) only matters for consolidated and automatic collection; it is read
    // so a malformed one is still a 400, and otherwise not needed.
    await readJsonBody(c);
    const invoice = await c.var.site.invoices.issue(uidParam(c, 'uid'));
    return sendJson(200, invoiceJson(invoice, await wireContext(c)));
  });

  app.get('/credit_notes.json', async (c) => {
    const query = readCreditNoteListQuery(queryOf(c));
    const { creditNotes } = await c.var.site.invoices.listCreditNotes(query);
    return sendJson(200, serializeCreditNoteList(creditNotes, await wireContext(c)));
  });

  app.get(`/credit_notes/:uid${JSON_SEGMENT}`, async (c) => {
    const note = await c.var.site.invoices.getCreditNote(uidParam(c, 'uid'));
    const invoice = await c.var.site.invoices.get(note.invoiceUid);
    return sendJson(200, creditNoteJson(note, await wireContext(c), invoice.number ?? undefined));
  });

  app.get(`/credit_notes/:uid${PDF_SEGMENT}`, async (c) => {
    const uid = uidParam(c, 'uid');
    const note = await c.var.site.invoices.getCreditNote(uid);
    return pdfResponse(await c.var.site.invoices.renderCreditNote(uid, 'pdf'), note.number);
  });

  // The SDK's `createInvoice` expects the `{"errors":{attribute:[...]}}` map on a 422.
  app.post('/subscriptions/:id/invoices.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const context = await wireContext(c);
    try {
      const invoice = await c.var.site.invoices.createAdhoc(id, readAdhocInvoice(body, context.currency));
      return sendJson(201, serializeInvoice(invoice, context));
    } catch (error) {
      throw asInvoiceErrorMap(error);
    }
  });

  app.get('/subscriptions/:id/statements.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const page = pageQuery.parse(queryOf(c));
    const statements = await c.var.site.invoices.statements(id);
    const context = await wireContext(c);
    return sendJson(
      200,
      pageOf(statements, page).map((statement) => serializeStatement(statement, context)),
    );
  });

  app.get(`/statements/:id${JSON_SEGMENT}`, async (c) => {
    const statement = await c.var.site.invoices.statement(idParam(c, 'id', 'Statement'));
    return sendJson(200, serializeStatement(statement, await wireContext(c)));
  });
}

/** One page of an invoice's events, newest last, with the invoice as it is now. */
async function eventsBody(c: HttpContext, uid: string, query: { readonly page: number; readonly perPage: number }) {
  const invoice = await c.var.site.invoices.get(uid);
  const events = await c.var.site.invoices.events(uid);
  return serializeInvoiceEvents(
    pageOf(events, query),
    invoice,
    { page: query.page, perPage: query.perPage, total: events.length },
    await wireContext(c),
  );
}
