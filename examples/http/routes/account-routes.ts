import { isBillingError, notFound } from 'billing-engine';
import type { Hono } from 'hono';
import { serializeInvoice } from '../../../src/wire/serialize-invoice.js';
import { proformaInvoiceJson } from '../../../src/wire/serialize-proforma-invoice.js';
import {
  type HttpAppEnv,
  type HttpContext,
  idParam,
  JSON_SEGMENT,
  readJsonBody,
  sendJson,
  wireContext,
} from '../http-context.js';
import {
  pageQuery,
  parseWireRequest,
  prepaymentJson,
  prepaymentListInput,
  prepaymentRefundRequest,
  prepaymentRequest,
  serializeAccountBalances,
  serializeBatchJob,
  serializeCreatedPrepayment,
  serializeServiceCredit,
  serviceCreditDeductionRequest,
  serviceCreditRequest,
  uniquenessTokenOf,
} from '../wire-bridge.js';
import { queryOf } from './route-params.js';
import { subscriptionBodies } from './subscription-routes.js';

/** Prepayments, service credits, account balances and exports. */
export function registerAccountRoutes(app: Hono<HttpAppEnv>): void {
  registerExportRoutes(app);
  app.get('/subscriptions/:id/account_balances.json', async (c) => {
    const balances = await c.var.site.accounts.balances(idParam(c, 'id', 'Subscription'));
    return sendJson(200, serializeAccountBalances(balances));
  });

  app.post('/subscriptions/:id/prepayments.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const input = { ...parseWireRequest(prepaymentRequest, body), ...uniquenessTokenOf(body) };
    const created = await c.var.site.accounts.createPrepayment(id, input);
    return sendJson(201, serializeCreatedPrepayment(created, await wireContext(c)));
  });

  app.get('/subscriptions/:id/prepayments.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const prepayments = await c.var.site.accounts.listPrepayments(id, prepaymentListInput(queryOf(c)));
    const context = await wireContext(c);
    return sendJson(200, { prepayments: prepayments.map((p) => prepaymentJson(p, context)) });
  });

  app.post('/subscriptions/:id/prepayments/:prepayment_id/refunds.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const prepaymentId = idParam(c, 'prepayment_id', 'Prepayment');
    const body = await readJsonBody(c);
    const input = { ...parseWireRequest(prepaymentRefundRequest, body), ...uniquenessTokenOf(body) };
    const refunded = await c.var.site.accounts.refundPrepayment(id, prepaymentId, input);
    return sendJson(201, { prepayment: prepaymentJson(refunded, await wireContext(c)) });
  });

  app.post('/subscriptions/:id/service_credits.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const input = { ...parseWireRequest(serviceCreditRequest, body), ...uniquenessTokenOf(body) };
    return sendJson(201, serializeServiceCredit(await c.var.site.accounts.issueServiceCredit(id, input)));
  });

  app.post('/subscriptions/:id/service_credit_deductions.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const input = { ...parseWireRequest(serviceCreditDeductionRequest, body), ...uniquenessTokenOf(body) };
    return sendJson(201, serializeServiceCredit(await c.var.site.accounts.deductServiceCredit(id, input)));
  });
}

/**
 * Exports of subscriptions, invoices and proforma invoices: start a job, read its status, page its
 * rows. A row is the record as the API serializes it (the SDK reads a bare `Subscription`,
 * `Invoice` or `ProformaInvoice` per row), built when the page is read.
 */
export function registerExportRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/api_exports/subscriptions.json', async (c) => {
    return sendJson(201, serializeBatchJob(await c.var.site.exports.exportSubscriptions(), await wireContext(c)));
  });
  app.post('/api_exports/invoices.json', async (c) => {
    return sendJson(201, serializeBatchJob(await c.var.site.exports.exportInvoices(), await wireContext(c)));
  });
  app.post('/api_exports/proforma_invoices.json', async (c) => {
    return sendJson(201, serializeBatchJob(await c.var.site.exports.exportProformaInvoices(), await wireContext(c)));
  });
  for (const kind of ['subscriptions', 'invoices', 'proforma_invoices'] as const) {
    app.get(`/api_exports/${kind}/:batch_id${JSON_SEGMENT}`, async (c) => {
      const job = await c.var.site.exports.read(kind, batchParam(c));
      return sendJson(200, serializeBatchJob(job, await wireContext(c)));
    });
  }
  app.get('/api_exports/subscriptions/:batch_id/rows.json', async (c) => {
    const rows = await c.var.site.exports.rows('subscriptions', batchParam(c), pageQuery.parse(queryOf(c)));
    const views = [];
    for (const row of rows) {
      if (!('id' in row)) continue;
      // A subscription cleared since the job ran is left out of its page.
      const view = await c.var.site.subscriptions.get(row.id).catch((error: unknown) => {
        if (isBillingError(error, 'not_found')) return undefined;
        throw error;
      });
      if (view !== undefined) views.push(view);
    }
    const bodies = await subscriptionBodies(c, views);
    return sendJson(
      200,
      bodies.map((b) => b.subscription),
    );
  });
  app.get('/api_exports/invoices/:batch_id/rows.json', async (c) => {
    const rows = await c.var.site.exports.rows('invoices', batchParam(c), pageQuery.parse(queryOf(c)));
    const context = await wireContext(c);
    const out = [];
    for (const row of rows) {
      if (!('uid' in row)) continue;
      const invoice = await c.var.site.invoices.get(row.uid).catch((error: unknown) => {
        if (isBillingError(error, 'not_found')) return undefined;
        throw error;
      });
      if (invoice !== undefined) out.push(serializeInvoice(invoice, context).invoice);
    }
    return sendJson(200, out);
  });
  app.get('/api_exports/proforma_invoices/:batch_id/rows.json', async (c) => {
    const rows = await c.var.site.exports.rows('proforma_invoices', batchParam(c), pageQuery.parse(queryOf(c)));
    const context = await wireContext(c);
    const out = [];
    for (const row of rows) {
      if (!('uid' in row)) continue;
      // A proforma invoice cleared since the job ran is left out of its page.
      const proforma = await c.var.site.proformaInvoices.get(row.uid).catch((error: unknown) => {
        if (isBillingError(error, 'not_found')) return undefined;
        throw error;
      });
      if (proforma !== undefined) out.push(proformaInvoiceJson(proforma, context));
    }
    return sendJson(200, out);
  });
}

/** The batch id of a path (`12.json` or `12`); anything else names no job (404). */
function batchParam(c: HttpContext): number {
  const raw = (c.req.param('batch_id') ?? '').replace(/\.json$/, '');
  if (!/^\d{1,15}$/.test(raw)) throw notFound('Export', raw);
  return Number(raw);
}
