import { invalid } from 'billing-engine';
import type { Hono } from 'hono';
import { type HttpAppEnv, type HttpContext, idParam, readJsonBody, sendJson } from '../http-context.js';
import {
  metadataJson,
  metadataNamesQuery,
  metadataRequest,
  metafieldJson,
  metafieldsRequest,
  metafieldUpdateRequest,
  pageQuery,
  parseWireParams,
  parseWireRequestList,
  refuseUniquenessToken,
  serializeMetadataList,
  serializeMetafieldList,
} from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/** The resource types whose custom fields the service's paths name (`/customers/...`, `/subscriptions/...`). */
const RESOURCES = [
  { path: 'customers', what: 'Customer' },
  { path: 'subscriptions', what: 'Subscription' },
] as const;

function nameQuery(c: HttpContext): string {
  const name = queryOf(c).name;
  if (typeof name !== 'string' || name.trim() === '') throw invalid('Name: cannot be blank.', 'name');
  return name.trim();
}

/**
 * Custom fields (metafields) of customers and subscriptions and their values (metadata): creates and
 * updates answer bare arrays, while the two GET lists answer the service's paginated objects.
 *
 * Registered before the customer and subscription routes: `/customers/metafields.json` also fits
 * `/customers/{id}.json`, and the route registered first is the one that answers.
 */
export function registerMetafieldRoutes(app: Hono<HttpAppEnv>): void {
  for (const { path, what } of RESOURCES) {
    app.post(`/${path}/metafields.json`, async (c) => {
      const body = await readJsonBody(c);
      const inputs = parseWireRequestList(metafieldsRequest, body);
      refuseUniquenessToken(body);
      const fields = await c.var.site.metafields.createFields(path, inputs);
      return sendJson(201, fields.map(metafieldJson));
    });

    app.get(`/${path}/metafields.json`, async (c) => {
      const page = pageQuery.parse(queryOf(c));
      return sendJson(200, serializeMetafieldList(await c.var.site.metafields.listFields(path), page));
    });

    // One engine command for the whole list: if any change is refused, none is kept.
    app.put(`/${path}/metafields.json`, async (c) => {
      const body = await readJsonBody(c);
      const updates = parseWireRequestList(metafieldUpdateRequest, body);
      refuseUniquenessToken(body);
      const updated = await c.var.site.metafields.updateFields(
        path,
        updates.map((update) => ({ name: update.currentName, input: update.input })),
      );
      return sendJson(200, updated.map(metafieldJson));
    });

    // The service answers with an empty body; clients must never get one, so `{}` it is.
    app.delete(`/${path}/metafields.json`, async (c) => {
      await c.var.site.metafields.deleteField(path, nameQuery(c));
      return sendJson(200, {});
    });

    const setMetadata = (status: number) => async (c: HttpContext) => {
      const id = idParam(c, 'id', what);
      const body = await readJsonBody(c);
      const values = parseWireRequestList(metadataRequest, body);
      refuseUniquenessToken(body);
      const all = await c.var.site.metafields.setMetadata(path, id, values);
      // The engine returns every value of the resource; the service answers with the ones sent.
      const sent = new Set(values.map((value) => value.name.trim()));
      return sendJson(status, all.filter((value) => sent.has(value.name)).map(metadataJson));
    };
    app.post(`/${path}/:id/metadata.json`, setMetadata(201));
    app.put(`/${path}/:id/metadata.json`, setMetadata(200));

    app.get(`/${path}/:id/metadata.json`, async (c) => {
      const id = idParam(c, 'id', what);
      const page = pageQuery.parse(queryOf(c));
      return sendJson(200, serializeMetadataList(await c.var.site.metafields.listMetadata(path, id), page));
    });

    app.delete(`/${path}/:id/metadata.json`, async (c) => {
      const id = idParam(c, 'id', what);
      const names = parseWireParams(metadataNamesQuery, queryOf(c), 'query');
      if (names.length === 0) throw invalid('Name: cannot be blank.', 'name');
      // A name without a value is deleted first, so that it fails (with the engine's own 404)
      // before any other value is gone: a request with a wrong name deletes nothing.
      const present = new Set((await c.var.site.metafields.listMetadata(path, id)).map((value) => value.name));
      const ordered = [...names.filter((name) => !present.has(name)), ...names.filter((name) => present.has(name))];
      for (const name of ordered) await c.var.site.metafields.deleteMetadata(path, id, name);
      return sendJson(200, {});
    });
  }
}
