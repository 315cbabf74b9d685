import { invalid } from 'billing-engine';
import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, JSON_SEGMENT, readJsonBody, sendJson, wireContext } from '../http-context.js';
import {
  customerRequest,
  isGiven,
  pageQuery,
  parseQueryString,
  parseWireRequest,
  serializeCustomer,
} from '../wire-bridge.js';

/** Customers: create, list, read, update and delete. */
export function registerCustomerRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/customers.json', async (c) => {
    const input = parseWireRequest(customerRequest, await readJsonBody(c));
    const customer = await c.var.site.customers.create(input);
    return sendJson(201, serializeCustomer(customer, await wireContext(c)));
  });

  app.get('/customers.json', async (c) => {
    const query = parseQueryString(new URL(c.req.url).search);
    // Ignoring a search would hand back customers the client did not ask for.
    if (isGiven(query.q)) throw invalid('Q: searching customers is not supported by this server yet.', 'q');
    const page = pageQuery.parse(query);
    const context = await wireContext(c);
    const customers = await c.var.site.customers.list(page.page, page.perPage);
    return sendJson(
      200,
      customers.map((customer) => serializeCustomer(customer, context)),
    );
  });

  app.get(`/customers/:id${JSON_SEGMENT}`, async (c) => {
    const customer = await c.var.site.customers.get(idParam(c, 'id', 'Customer'));
    return sendJson(200, serializeCustomer(customer, await wireContext(c)));
  });

  app.put(`/customers/:id${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Customer');
    const input = parseWireRequest(customerRequest, await readJsonBody(c));
    const customer = await c.var.site.customers.update(id, input);
    return sendJson(200, serializeCustomer(customer, await wireContext(c)));
  });

  // The service answers 204; clients must never get an empty success body here, so `{}` it is.
  app.delete(`/customers/:id${JSON_SEGMENT}`, async (c) => {
    await c.var.site.customers.delete(idParam(c, 'id', 'Customer'));
    return sendJson(200, {});
  });
}
