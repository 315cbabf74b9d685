import { type ComponentView, invalid, notFound } from 'billing-engine';
import type { Hono } from 'hono';
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
  COMPONENT_KIND_PATHS,
  componentCreateRequest,
  componentPricePointFieldsJson,
  componentUpdateRequest,
  listPaging,
  pageOf,
  parseWireRequest,
  queryText,
  refuseUniquenessToken,
  serializeComponent,
  wireBoolean,
} from '../wire-bridge.js';
import { CATALOG_LIST_FILTERS, componentParam, familyParam, queryOf, refuseUnappliedFilters } from './route-params.js';

/**
 * The component `id` of a path under `/product_families/{fid}/`, checked to be in that family: a
 * component of another family is not found there, as the service's nested paths promise.
 */
async function componentInFamily(c: HttpContext): Promise<ComponentView> {
  const family = await c.var.site.catalog.getFamily(familyParam(c, 'fid'));
  const id = idParam(c, 'id', 'Component');
  const view = await c.var.site.components.get(id);
  if (view.component.familyId !== family.id) throw notFound('Component', id);
  return view;
}

/**
 * `{"component":{...}}` of each view, with the component's price point fields (its default price
 * point and how many live price points it has), which the component serializer does not know.
 */
async function componentBodies(c: HttpContext, views: readonly ComponentView[]) {
  const only = views.length === 1 ? views[0]!.component.id : undefined;
  const records = await c.var.site.pricePoints.listComponentPricePointRecords(only);
  const context = await wireContext(c);
  return views.map((view) => {
    const own = records.filter((r) => r.componentId === view.component.id);
    const body = serializeComponent(view, context);
    return {
      component: {
        ...body.component,
        ...componentPricePointFieldsJson(
          own.find((r) => r.type === 'default'),
          own.length,
        ),
      },
    };
  });
}

/** The body of one component, with its price point fields. */
async function componentBody(c: HttpContext, view: ComponentView) {
  return (await componentBodies(c, [view]))[0]!;
}

/**
 * Components: create one of the three kinds in a family (the body wrapped in the
 * kind's key), list a family's components, read, update (a pricing change makes a new version) and
 * archive. Prices are decimal strings in every answer.
 */
export function registerComponentRoutes(app: Hono<HttpAppEnv>): void {
  for (const [path, kind] of Object.entries(COMPONENT_KIND_PATHS)) {
    const request = componentCreateRequest(kind);
    app.post(`/product_families/:id/${path}.json`, async (c) => {
      // The path's family is checked first: an unknown one is a 404 whatever the body says.
      const family = await c.var.site.catalog.getFamily(familyParam(c, 'id'));
      const body = await readJsonBody(c);
      const input = parseWireRequest(request, body);
      refuseUniquenessToken(body);
      const view = await c.var.site.components.create(family.id, input);
      return sendJson(201, await componentBody(c, view));
    });
  }

  // Archived components are left out unless `include_archived=true`, as the service lists them.
  app.get('/product_families/:id/components.json', async (c) => {
    const familyId = familyParam(c, 'id');
    const includeArchived = wireBoolean.safeParse(queryOf(c).include_archived).data === true;
    const views = await c.var.site.components.list({ familyId, includeArchived });
    return sendJson(200, await componentBodies(c, views));
  });

  // Every family's components (the SDK's listComponents), paged; archived ones only when asked for.
  app.get('/components.json', async (c) => {
    const query = queryOf(c);
    refuseUnappliedFilters(query, CATALOG_LIST_FILTERS);
    const includeArchived = wireBoolean.safeParse(query.include_archived).data === true;
    const views = await c.var.site.components.list({ includeArchived });
    const paging = listPaging(query);
    const ordered = paging.direction === 'desc' ? [...views].reverse() : views;
    return sendJson(200, await componentBodies(c, pageOf(ordered, paging)));
  });

  // Before `/components/{id}.json`, which would read `lookup` as an id and answer a misleading 404.
  app.get('/components/lookup.json', async (c) => {
    const handle = queryText(queryOf(c).handle);
    if (handle === undefined) throw invalid('Handle: cannot be blank.', 'handle');
    return sendJson(200, await componentBody(c, await c.var.site.components.get(handle)));
  });

  app.get(`/components/:id${JSON_SEGMENT}`, async (c) => {
    const view = await c.var.site.components.get(componentParam(c, 'id'));
    return sendJson(200, await componentBody(c, view));
  });

  // The SDK's updateComponent: the same change as under the component's family path.
  app.put(`/components/:id${JSON_SEGMENT}`, async (c) => {
    const current = await c.var.site.components.get(componentParam(c, 'id'));
    const body = await readJsonBody(c);
    const input = parseWireRequest(componentUpdateRequest, body);
    refuseUniquenessToken(body);
    const view = await c.var.site.components.update(current.component.id, input);
    return sendJson(200, await componentBody(c, view));
  });

  app.get(`/product_families/:fid/components/:id${JSON_SEGMENT}`, async (c) => {
    return sendJson(200, await componentBody(c, await componentInFamily(c)));
  });

  app.put(`/product_families/:fid/components/:id${JSON_SEGMENT}`, async (c) => {
    const current = await componentInFamily(c);
    const body = await readJsonBody(c);
    const input = parseWireRequest(componentUpdateRequest, body);
    refuseUniquenessToken(body);
    const view = await c.var.site.components.update(current.component.id, input);
    return sendJson(200, await componentBody(c, view));
  });

  // Archives: the component can no longer be added, while existing allocations keep billing.
  app.delete(`/product_families/:fid/components/:id${JSON_SEGMENT}`, async (c) => {
    const current = await componentInFamily(c);
    const view = await c.var.site.components.archive(current.component.id);
    return sendJson(200, await componentBody(c, view));
  });
}
