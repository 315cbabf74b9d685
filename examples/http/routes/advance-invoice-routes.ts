import { invalid } from 'billing-engine';
import type { Hono } from 'hono';
// The invoice wire module is not (yet) exported by `billing-engine/chargify`; it is reached
// directly, as the invoice routes reach it.
import { invoiceJson } from '../../../src/wire/serialize-invoice.js';
import { type HttpAppEnv, idParam, readJsonBody, sendJson, wireContext } from '../http-context.js';

/** The issue body `{"force": true}`; no body at all (or `{}`) issues without force. The engine checks `force`. */
function readIssueBody(body: unknown): { force?: boolean } {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalid('Body: must be a JSON object.');
  const force = (body as Record<string, unknown>).force;
  return force === undefined || force === null ? {} : { force: force as boolean };
}

/** The reason of a void body `{"void":{"reason":"..."}}`; empty when the body has none (the engine refuses it). */
function voidReason(body: unknown): string {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return '';
  const wrapped = (body as Record<string, unknown>).void;
  if (wrapped === null || typeof wrapped !== 'object' || Array.isArray(wrapped)) return '';
  const reason = (wrapped as Record<string, unknown>).reason;
  return typeof reason === 'string' ? reason : '';
}

/**
 * Advance invoices (the official SDK's `AdvanceInvoiceController`): issuing, reading and voiding
 * a subscription's next period's invoice before its renewal. Each answers the bare invoice, as
 * the SDK's `Invoice` model expects. The paths have more segments than `/subscriptions/{id}.json`,
 * so that route never shadows them.
 */
export function registerAdvanceInvoiceRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/subscriptions/:id/advance_invoice/issue.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const input = readIssueBody(await readJsonBody(c));
    const invoice = await c.var.site.advanceInvoices.issue(id, input);
    return sendJson(201, invoiceJson(invoice, await wireContext(c)));
  });

  app.get('/subscriptions/:id/advance_invoice.json', async (c) => {
    const invoice = await c.var.site.advanceInvoices.read(idParam(c, 'id', 'Subscription'));
    return sendJson(200, invoiceJson(invoice, await wireContext(c)));
  });

  // Body `{"void":{"reason":"..."}}`; the reason is required. A subscription that is not the
  // site's is a 404 whatever the body (the engine looks it up first); a body without a usable
  // reason is then a 422 ("Reason: cannot be blank.").
  app.post('/subscriptions/:id/advance_invoice/void.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const reason = voidReason(await readJsonBody(c));
    const invoice = await c.var.site.advanceInvoices.void(id, reason);
    return sendJson(200, invoiceJson(invoice, await wireContext(c)));
  });
}
