import { notFound, type ProductFamilyRecord, type SiteHandle } from 'billing-engine';
import type { Hono } from 'hono';
import {
  type HttpAppEnv,
  idParam,
  JSON_SEGMENT,
  readJsonBody,
  sendJson,
  stripJsonSuffix,
  wireContext,
} from '../http-context.js';
import {
  listPaging,
  pageOf,
  parseWireRequest,
  productFamilyRequest,
  productRequest,
  serializeProduct,
  serializeProductFamily,
  wireBoolean,
} from '../wire-bridge.js';
import { CATALOG_LIST_FILTERS, queryOf, refuseUnappliedFilters } from './route-params.js';

// The engine has no single-family read yet; the family list is small, so it stands in for one.
async function findFamily(site: SiteHandle, id: number): Promise<ProductFamilyRecord | undefined> {
  return (await site.catalog.listFamilies()).find((family) => family.id === id);
}

/** Product families and products: create, list, read by id or handle, and change (a new version). */
export function registerCatalogRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/product_families.json', async (c) => {
    const input = parseWireRequest(productFamilyRequest, await readJsonBody(c));
    const family = await c.var.site.catalog.createFamily(input);
    return sendJson(201, serializeProductFamily(family, await wireContext(c)));
  });

  app.get('/product_families.json', async (c) => {
    const context = await wireContext(c);
    const families = await c.var.site.catalog.listFamilies();
    return sendJson(
      200,
      families.map((family) => serializeProductFamily(family, context)),
    );
  });

  app.get(`/product_families/:id${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Product family');
    const family = await findFamily(c.var.site, id);
    if (!family) throw notFound('Product family', id);
    return sendJson(200, serializeProductFamily(family, await wireContext(c)));
  });

  app.post('/product_families/:id/products.json', async (c) => {
    const familyId = idParam(c, 'id', 'Product family');
    const input = parseWireRequest(productRequest, await readJsonBody(c));
    const view = await c.var.site.catalog.createProduct(familyId, input);
    return sendJson(201, serializeProduct(view, await wireContext(c), await findFamily(c.var.site, familyId)));
  });

  // Every family's products (the SDK's listProducts), paged; archived ones only when asked for.
  app.get('/products.json', async (c) => {
    const query = queryOf(c);
    refuseUnappliedFilters(query, CATALOG_LIST_FILTERS);
    const includeArchived = wireBoolean.safeParse(query.include_archived).data === true;
    const views = await c.var.site.catalog.listProducts({ includeArchived });
    const paging = listPaging(query);
    const ordered = paging.direction === 'desc' ? [...views].reverse() : views;
    const families = new Map((await c.var.site.catalog.listFamilies()).map((family) => [family.id, family]));
    const context = await wireContext(c);
    return sendJson(
      200,
      pageOf(ordered, paging).map((view) => serializeProduct(view, context, families.get(view.product.familyId))),
    );
  });

  app.get(`/products/:id${JSON_SEGMENT}`, async (c) => {
    const view = await c.var.site.catalog.getProduct(idParam(c, 'id', 'Product'));
    return sendJson(
      200,
      serializeProduct(view, await wireContext(c), await findFamily(c.var.site, view.product.familyId)),
    );
  });

  app.get(`/products/handle/:handle${JSON_SEGMENT}`, async (c) => {
    const view = await c.var.site.catalog.getProduct(stripJsonSuffix(c.req.param('handle')));
    return sendJson(
      200,
      serializeProduct(view, await wireContext(c), await findFamily(c.var.site, view.product.familyId)),
    );
  });

  app.put(`/products/:id${JSON_SEGMENT}`, async (c) => {
    const productId = idParam(c, 'id', 'Product');
    const input = parseWireRequest(productRequest, await readJsonBody(c));
    const view = await c.var.site.catalog.updateProduct(productId, input);
    return sendJson(
      200,
      serializeProduct(view, await wireContext(c), await findFamily(c.var.site, view.product.familyId)),
    );
  });
}
