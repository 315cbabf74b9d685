import { invalid } from 'billing-engine';
import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, JSON_SEGMENT, readJsonBody, sendJson, wireContext } from '../http-context.js';
import {
  customerListInput,
  customerRequest,
  listPaging,
  parseWireRequest,
  queryText,
  serializeCustomer,
} from '../wire-bridge.js';
import { queryOf } from './route-params.js';
import { subscriptionBodies } from './subscription-routes.js';

/** Customers: create, list (search, dates, direction), lookup by reference, read, update, delete, their subscriptions. */
export function registerCustomerRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/customers.json', async (c) => {
    const input = parseWireRequest(customerRequest, await readJsonBody(c));
    const customer = await c.var.site.customers.create(input);
    return sendJson(201, serializeCustomer(customer, await wireContext(c)));
  });

  app.get('/customers.json', async (c) => {
    const customers = await c.var.site.customers.search(customerListInput(queryOf(c)));
    const context = await wireContext(c);
    return sendJson(
      200,
      customers.map((customer) => serializeCustomer(customer, context)),
    );
  });

  // Before `/customers/{id}.json`, which would read `lookup` as an id and answer a misleading 404.
  app.get('/customers/lookup.json', async (c) => {
    const reference = queryText(queryOf(c).reference);
    if (reference === undefined) throw invalid('Reference: cannot be blank.', 'reference');
    const customer = await c.var.site.customers.lookup(reference);
    return sendJson(200, serializeCustomer(customer, await wireContext(c)));
  });

  app.get('/customers/:id/subscriptions.json', async (c) => {
    const id = idParam(c, 'id', 'Customer');
    // The customer is read first so that an unknown one is a 404, not an empty list.
    await c.var.site.customers.get(id);
    const paging = listPaging(queryOf(c));
    const views = await c.var.site.subscriptions.list({
      customerId: id,
      page: paging.page,
      perPage: paging.perPage,
      ...(paging.direction === undefined ? {} : { direction: paging.direction as 'asc' | 'desc' }),
    });
    return sendJson(200, await subscriptionBodies(c, views));
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
