import type { TransactionRecord } from 'billing-engine';
import type { Hono } from 'hono';
import { type HttpAppEnv, type HttpContext, idParam, readJsonBody, sendJson, wireContext } from '../http-context.js';
import {
  adjustmentRequest,
  asPaymentErrorMap,
  chargeRequest,
  creditRequest,
  parseWireParams,
  parseWireRequest,
  paymentRequest,
  readRefundRequest,
  refundRequest,
  serializeTransaction,
  transactionJson,
  transactionListParams,
  uniquenessTokenOf,
} from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/** `{"<wrapper>":{...}}` with a ledger line, the 201 body of every ledger command. */
async function lineBody(c: HttpContext, wrapper: string, line: TransactionRecord) {
  return { [wrapper]: transactionJson(line, await wireContext(c)) };
}

async function transactionList(c: HttpContext, subscriptionId?: number) {
  const query = parseWireParams(transactionListParams, queryOf(c), 'query');
  const lines = await c.var.site.ledger.transactions({
    ...query,
    ...(subscriptionId === undefined ? {} : { subscriptionId }),
  });
  const context = await wireContext(c);
  return lines.map((line) => serializeTransaction(line, context));
}

/**
 * The subscription ledger: one-time charges, adjustments, credits, external payments
 * and refunds (each 201 with the ledger line it wrote), and the site's and a subscription's
 * transaction lists. Every command takes the top-level `uniqueness_token`: a repeat within
 * the hour is a 409.
 */
export function registerLedgerRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/subscriptions/:id/charges.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const input = { ...parseWireRequest(chargeRequest, body), ...uniquenessTokenOf(body) };
    return sendJson(201, await lineBody(c, 'charge', await c.var.site.ledger.charge(id, input)));
  });

  app.post('/subscriptions/:id/adjustments.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const input = { ...parseWireRequest(adjustmentRequest, body), ...uniquenessTokenOf(body) };
    return sendJson(201, await lineBody(c, 'adjustment', await c.var.site.ledger.adjust(id, input)));
  });

  app.post('/subscriptions/:id/credits.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const input = { ...parseWireRequest(creditRequest, body), ...uniquenessTokenOf(body) };
    return sendJson(201, await lineBody(c, 'credit', await c.var.site.ledger.credit(id, input)));
  });

  // This endpoint's 422 body is the service's map shape, whichever layer found the problem.
  app.post('/subscriptions/:id/payments.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    try {
      const input = { ...parseWireRequest(paymentRequest, body), ...uniquenessTokenOf(body) };
      return sendJson(201, await lineBody(c, 'payment', await c.var.site.ledger.recordExternalPayment(id, input)));
    } catch (error) {
      throw asPaymentErrorMap(error);
    }
  });

  app.post('/subscriptions/:id/refunds.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const input = { ...readRefundRequest(parseWireRequest(refundRequest, body), body), ...uniquenessTokenOf(body) };
    return sendJson(201, await lineBody(c, 'refund', await c.var.site.ledger.refund(id, input)));
  });

  app.get('/transactions.json', async (c) => sendJson(200, await transactionList(c)));

  app.get('/subscriptions/:id/transactions.json', async (c) =>
    sendJson(200, await transactionList(c, idParam(c, 'id', 'Subscription'))),
  );
}
