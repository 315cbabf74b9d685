import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, JSON_SEGMENT, readJsonBody, sendJson, wireContext } from '../http-context.js';
import {
  parseWireRequest,
  productFamilyUpdateRequest,
  refuseUniquenessToken,
  serializeProduct,
  serializeProductFamily,
  wireBoolean,
} from '../wire-bridge.js';
import { familyParam, queryOf } from './route-params.js';

/** More of the catalog: a family's products, changing a family, and archiving a product. */
export function registerProductFamilyRoutes(app: Hono<HttpAppEnv>): void {
  // Archived products are left out unless `include_archived=true`: they can no longer be subscribed to.
  app.get('/product_families/:id/products.json', async (c) => {
    const family = await c.var.site.catalog.getFamily(familyParam(c, 'id'));
    const includeArchived = wireBoolean.safeParse(queryOf(c).include_archived).data === true;
    const views = await c.var.site.catalog.listProducts({ familyId: family.id, includeArchived });
    const context = await wireContext(c);
    return sendJson(
      200,
      views.map((view) => serializeProduct(view, context, family)),
    );
  });

  app.put(`/product_families/:id${JSON_SEGMENT}`, async (c) => {
    const familyId = familyParam(c, 'id');
    const body = await readJsonBody(c);
    const input = parseWireRequest(productFamilyUpdateRequest, body);
    refuseUniquenessToken(body);
    const family = await c.var.site.catalog.updateFamily(familyId, input);
    return sendJson(200, serializeProductFamily(family, await wireContext(c)));
  });

  // Archives: current subscribers keep billing, but the product can no longer be subscribed to.
  app.delete(`/products/:id${JSON_SEGMENT}`, async (c) => {
    const view = await c.var.site.catalog.archiveProduct(idParam(c, 'id', 'Product'));
    const family = await c.var.site.catalog.getFamily(view.product.familyId);
    return sendJson(200, serializeProduct(view, await wireContext(c), family));
  });
}
