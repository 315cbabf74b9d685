import { invalid, isBillingError, notFound, type PricePointType, validationError } from 'billing-engine';
import type { Hono } from 'hono';
import {
  type HttpAppEnv,
  type HttpContext,
  idParam,
  JSON_SEGMENT,
  readJsonBody,
  sendJson,
  stripJsonSuffix,
  wireContext,
} from '../http-context.js';
import {
  componentPricePointFieldsJson,
  componentPricePointRequest,
  componentPricePointsBulkRequest,
  listPaging,
  pageOf,
  parseComponentCurrencyPrices,
  parseComponentPricePointAssignments,
  parseCurrencyPriceUpdates,
  parseProductCurrencyPrices,
  parseWireRequest,
  parseWireRequestList,
  productPricePointRequest,
  productPricePointsBulkRequest,
  serializeComponent,
  serializeComponentPricePoint,
  serializeComponentPricePoints,
  serializeProduct,
  serializeProductPricePoint,
  serializeProductPricePoints,
  wireBoolean,
  withCurrencyPrices,
} from '../wire-bridge.js';
import { queryOf, refuseUnappliedFilters } from './route-params.js';
import { subscriptionBody } from './subscription-routes.js';

const TYPES: readonly PricePointType[] = ['default', 'catalog', 'custom'];

/** A product or price point named in the path: a numeric id, or `handle:<handle>` as the SDK's paths allow. */
function refParam(c: HttpContext, name: string, what: string): number | string {
  const raw = stripJsonSuffix(c.req.param(name) ?? '');
  if (raw.startsWith('handle:') && raw.length > 'handle:'.length) return raw.slice('handle:'.length);
  if (!/^\d+$/.test(raw)) throw notFound(what, raw);
  return idParam(c, name, what);
}

/** `filter[type]=catalog,default` (or the `filter_type` list the SDK may send) as price point types. */
function typesOf(value: unknown): PricePointType[] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const words = (Array.isArray(value) ? value : String(value).split(',')).map((w) => String(w).trim()).filter(Boolean);
  for (const word of words) {
    if (!TYPES.includes(word as PricePointType))
      throw invalid(`filter[type]: must be one of ${TYPES.join(', ')}.`, 'filter[type]');
  }
  return words as PricePointType[];
}

/** The service answers price point validation errors as a map of field to messages, body errors included. */
async function asMap<T>(work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isBillingError(error, 'validation') && error.shape === 'list') {
      // Keyed by the field alone (`interval_unit`), as the service keys them, not `price_point.interval_unit`.
      const details = error.details.map((d) =>
        d.attribute === undefined ? d : { ...d, attribute: d.attribute.replace(/^price_points?\.(\d+\.)?/, '') },
      );
      throw validationError(details, 'map');
    }
    throw error;
  }
}

function filterOf(query: Record<string, unknown>): Record<string, unknown> {
  const filter = query.filter;
  return filter !== null && typeof filter === 'object' && !Array.isArray(filter)
    ? (filter as Record<string, unknown>)
    : {};
}

/** Price points of products: create, bulk create, list, list all, read, update, archive, unarchive, set default. */
export function registerPricePointRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/products/:id/price_points.json', async (c) => {
    const product = refParam(c, 'id', 'Product');
    const body = await readJsonBody(c);
    const view = await asMap(async () =>
      c.var.site.pricePoints.createProductPricePoint(product, parseWireRequest(productPricePointRequest, body)),
    );
    return sendJson(201, serializeProductPricePoint(view, await wireContext(c)));
  });

  app.post('/products/:id/price_points/bulk.json', async (c) => {
    const product = refParam(c, 'id', 'Product');
    const body = await readJsonBody(c);
    const views = await asMap(async () =>
      c.var.site.pricePoints.bulkCreateProductPricePoints(
        product,
        parseWireRequestList(productPricePointsBulkRequest, body),
      ),
    );
    return sendJson(201, serializeProductPricePoints(views, await wireContext(c)));
  });

  app.get('/products/:id/price_points.json', async (c) => {
    const product = refParam(c, 'id', 'Product');
    const query = queryOf(c);
    const includeArchived = wireBoolean.safeParse(query.archived).data === true;
    const types = typesOf(filterOf(query).type ?? query.filter_type);
    const views = await c.var.site.pricePoints.listProductPricePoints(product, {
      includeArchived,
      ...(types === undefined ? {} : { types }),
    });
    const body = serializeProductPricePoints(pageOf(views, listPaging(query)), await wireContext(c));
    return sendJson(
      200,
      asksCurrencyPrices(query) ? { price_points: body.price_points.map(withCurrencyPrices) } : body,
    );
  });

  app.get('/products_price_points.json', async (c) => {
    const query = queryOf(c);
    const views = await c.var.site.pricePoints.listAllProductPricePoints(allListFilters(query));
    const paging = listPaging(query);
    const ordered = paging.direction === 'desc' ? [...views].reverse() : views;
    const body = serializeProductPricePoints(pageOf(ordered, paging), await wireContext(c));
    return sendJson(
      200,
      includesCurrencyPrices(query) ? { price_points: body.price_points.map(withCurrencyPrices) } : body,
    );
  });

  registerComponentPricePointRoutes(app);

  app.get(`/products/:id/price_points/:price_point_id${JSON_SEGMENT}`, async (c) => {
    const view = await c.var.site.pricePoints.getProductPricePoint(
      refParam(c, 'id', 'Product'),
      refParam(c, 'price_point_id', 'Price point'),
    );
    const body = serializeProductPricePoint(view, await wireContext(c));
    return sendJson(200, asksCurrencyPrices(queryOf(c)) ? { price_point: withCurrencyPrices(body.price_point) } : body);
  });

  app.put(`/products/:id/price_points/:price_point_id${JSON_SEGMENT}`, async (c) => {
    const product = refParam(c, 'id', 'Product');
    const pricePoint = refParam(c, 'price_point_id', 'Price point');
    const body = await readJsonBody(c);
    const view = await asMap(async () =>
      c.var.site.pricePoints.updateProductPricePoint(
        product,
        pricePoint,
        parseWireRequest(productPricePointRequest, body),
      ),
    );
    return sendJson(200, serializeProductPricePoint(view, await wireContext(c)));
  });

  app.delete(`/products/:id/price_points/:price_point_id${JSON_SEGMENT}`, async (c) => {
    const view = await asMap(() =>
      c.var.site.pricePoints.archiveProductPricePoint(
        refParam(c, 'id', 'Product'),
        refParam(c, 'price_point_id', 'Price point'),
      ),
    );
    return sendJson(200, serializeProductPricePoint(view, await wireContext(c)));
  });

  app.patch('/products/:id/price_points/:price_point_id/unarchive.json', async (c) => {
    const view = await c.var.site.pricePoints.unarchiveProductPricePoint(
      refParam(c, 'id', 'Product'),
      refParam(c, 'price_point_id', 'Price point'),
    );
    return sendJson(200, serializeProductPricePoint(view, await wireContext(c)));
  });

  app.patch('/products/:id/price_points/:price_point_id/default.json', async (c) => {
    const view = await asMap(() =>
      c.var.site.pricePoints.promoteProductPricePointToDefault(
        refParam(c, 'id', 'Product'),
        refParam(c, 'price_point_id', 'Price point'),
      ),
    );
    const family = (await c.var.site.catalog.listFamilies()).find((f) => f.id === view.product.familyId);
    return sendJson(200, serializeProduct(view, await wireContext(c), family));
  });

  registerCurrencyPriceRoutes(app);
}

/** `currency_prices=true` on a price point read or list: the reads then carry `currency_prices`. */
function asksCurrencyPrices(query: Record<string, unknown>): boolean {
  return wireBoolean.safeParse(query.currency_prices).data === true;
}

/** `include=currency_prices` on the site-wide price point lists. */
function includesCurrencyPrices(query: Record<string, unknown>): boolean {
  const include = query.include;
  const words = Array.isArray(include) ? include : typeof include === 'string' ? include.split(',') : [];
  return words.some((word) => String(word).trim() === 'currency_prices');
}

/**
 * Currency prices of product and component price points (create and update), as a site with one
 * currency answers them: the engine checks the request, looks the price point up (404), refuses a
 * custom one, and then refuses each currency by name; nothing is written. Refusals are a map of
 * field to messages, as the SDK reads them (`ErrorArrayMapResponse`).
 */
function registerCurrencyPriceRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/product_price_points/:id/currency_prices.json', async (c) => {
    const id = idParam(c, 'id', 'Price point');
    const body = await readJsonBody(c);
    return asMap(() => c.var.site.pricePoints.createProductCurrencyPrices(id, parseProductCurrencyPrices(body)));
  });

  app.put('/product_price_points/:id/currency_prices.json', async (c) => {
    const id = idParam(c, 'id', 'Price point');
    const body = await readJsonBody(c);
    return asMap(() => c.var.site.pricePoints.updateProductCurrencyPrices(id, parseCurrencyPriceUpdates(body)));
  });

  app.post('/price_points/:id/currency_prices.json', async (c) => {
    const id = idParam(c, 'id', 'Price point');
    const body = await readJsonBody(c);
    return asMap(() => c.var.site.pricePoints.createComponentCurrencyPrices(id, parseComponentCurrencyPrices(body)));
  });

  app.put('/price_points/:id/currency_prices.json', async (c) => {
    const id = idParam(c, 'id', 'Price point');
    const body = await readJsonBody(c);
    return asMap(() => c.var.site.pricePoints.updateComponentCurrencyPrices(id, parseCurrencyPriceUpdates(body)));
  });
}

/**
 * The filters of the site-wide price point lists (`GET /products_price_points.json`,
 * `GET /components_price_points.json`): `filter[type]`, `filter[ids]` and `filter[archived_at]`.
 * The date filters are refused: the lists are not filtered by date.
 */
function allListFilters(query: Record<string, unknown>): {
  types?: PricePointType[];
  ids?: number[];
  archivedAt?: 'null' | 'not_null';
} {
  const filter = filterOf(query);
  refuseUnappliedFilters(
    Object.fromEntries(
      ['date_field', 'start_date', 'end_date', 'start_datetime', 'end_datetime'].map((k) => [
        `filter[${k}]`,
        filter[k],
      ]),
    ),
    ['filter[date_field]', 'filter[start_date]', 'filter[end_date]', 'filter[start_datetime]', 'filter[end_datetime]'],
  );
  const types = typesOf(filter.type);
  const ids =
    filter.ids === undefined
      ? undefined
      : String(filter.ids)
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .map((s) => {
            if (!/^\d+$/.test(s)) throw invalid('filter[ids]: must be a list of ids.', 'filter[ids]');
            return Number(s);
          });
  const archivedAt = filter.archived_at;
  if (archivedAt !== undefined && archivedAt !== 'null' && archivedAt !== 'not_null')
    throw invalid("filter[archived_at]: must be 'null' or 'not_null'.", 'filter[archived_at]');
  return {
    ...(types === undefined ? {} : { types }),
    ...(ids === undefined ? {} : { ids }),
    ...(archivedAt === undefined ? {} : { archivedAt }),
  };
}

/**
 * Price points of components: create, bulk create, list, list all, read, update, archive,
 * unarchive, set default; and moving a subscription's components to other price points or back to
 * their defaults. Create and update refusals are a map of field to messages, bulk and archive
 * refusals a list, as the SDK reads each.
 */
function registerComponentPricePointRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/components/:id/price_points.json', async (c) => {
    const component = refParam(c, 'id', 'Component');
    const body = await readJsonBody(c);
    const view = await asMap(async () =>
      c.var.site.pricePoints.createComponentPricePoint(component, parseWireRequest(componentPricePointRequest, body)),
    );
    return sendJson(201, serializeComponentPricePoint(view, await wireContext(c)));
  });

  app.post('/components/:id/price_points/bulk.json', async (c) => {
    const component = refParam(c, 'id', 'Component');
    const body = await readJsonBody(c);
    const views = await c.var.site.pricePoints.bulkCreateComponentPricePoints(
      component,
      parseWireRequestList(componentPricePointsBulkRequest, body),
    );
    return sendJson(201, serializeComponentPricePoints(views, await wireContext(c)));
  });

  app.get('/components/:id/price_points.json', async (c) => {
    const component = refParam(c, 'id', 'Component');
    const query = queryOf(c);
    // Component price points always carry `currency_prices` (empty: the site has one currency).
    const includeArchived = wireBoolean.safeParse(query.archived).data === true;
    const types = typesOf(filterOf(query).type ?? query.filter_type);
    const views = await c.var.site.pricePoints.listComponentPricePoints(component, {
      includeArchived,
      ...(types === undefined ? {} : { types }),
    });
    return sendJson(200, serializeComponentPricePoints(pageOf(views, listPaging(query)), await wireContext(c)));
  });

  app.get('/components_price_points.json', async (c) => {
    const query = queryOf(c);
    // `include=currency_prices` asks for prices in other currencies, of which a site has none.
    const views = await c.var.site.pricePoints.listAllComponentPricePoints(allListFilters(query));
    const paging = listPaging(query);
    const ordered = paging.direction === 'desc' ? [...views].reverse() : views;
    return sendJson(200, serializeComponentPricePoints(pageOf(ordered, paging), await wireContext(c)));
  });

  app.get(`/components/:id/price_points/:price_point_id${JSON_SEGMENT}`, async (c) => {
    const view = await c.var.site.pricePoints.getComponentPricePoint(
      refParam(c, 'id', 'Component'),
      refParam(c, 'price_point_id', 'Price point'),
    );
    return sendJson(200, serializeComponentPricePoint(view, await wireContext(c)));
  });

  app.put(`/components/:id/price_points/:price_point_id${JSON_SEGMENT}`, async (c) => {
    const component = refParam(c, 'id', 'Component');
    const pricePoint = refParam(c, 'price_point_id', 'Price point');
    const body = await readJsonBody(c);
    const view = await asMap(async () =>
      c.var.site.pricePoints.updateComponentPricePoint(
        component,
        pricePoint,
        parseWireRequest(componentPricePointRequest, body),
      ),
    );
    return sendJson(200, serializeComponentPricePoint(view, await wireContext(c)));
  });

  app.delete(`/components/:id/price_points/:price_point_id${JSON_SEGMENT}`, async (c) => {
    const view = await c.var.site.pricePoints.archiveComponentPricePoint(
      refParam(c, 'id', 'Component'),
      refParam(c, 'price_point_id', 'Price point'),
    );
    return sendJson(200, serializeComponentPricePoint(view, await wireContext(c)));
  });

  app.put('/components/:id/price_points/:price_point_id/unarchive.json', async (c) => {
    const view = await c.var.site.pricePoints.unarchiveComponentPricePoint(
      refParam(c, 'id', 'Component'),
      refParam(c, 'price_point_id', 'Price point'),
    );
    return sendJson(200, serializeComponentPricePoint(view, await wireContext(c)));
  });

  app.put('/components/:id/price_points/:price_point_id/default.json', async (c) => {
    const view = await c.var.site.pricePoints.promoteComponentPricePointToDefault(
      refParam(c, 'id', 'Component'),
      refParam(c, 'price_point_id', 'Price point'),
    );
    const body = serializeComponent(view, await wireContext(c));
    const records = await c.var.site.pricePoints.listComponentPricePointRecords(view.component.id);
    return sendJson(200, {
      component: {
        ...body.component,
        ...componentPricePointFieldsJson(
          records.find((r) => r.type === 'default'),
          records.length,
        ),
      },
    });
  });

  // Moves the subscription's components from their next charge on; answers what was assigned.
  app.post('/subscriptions/:id/price_points.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const assignments = parseComponentPricePointAssignments(await readJsonBody(c));
    const assigned = await c.var.site.pricePoints.setSubscriptionComponentPricePoints(id, assignments);
    return sendJson(200, {
      components: assigned.map((a) => ({ component_id: a.componentId, price_point: a.pricePoint.id })),
    });
  });

  app.post('/subscriptions/:id/price_points/reset.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    await c.var.site.pricePoints.resetSubscriptionComponentPricePoints(id);
    return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.get(id)));
  });
}
