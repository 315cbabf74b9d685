import { type CouponRecord, isBillingError, notFound, type ProductFamilyRecord } from 'billing-engine';
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
  couponCodeQuery,
  couponListQuery,
  couponRequest,
  pageQuery,
  parseCouponCurrencyPrices,
  parseWireParams,
  parseWireRequest,
  readSubcodesBody,
  refuseUniquenessToken,
  serializeCoupon,
  serializeCouponUsage,
  serializeSubcodesResult,
  wireBoolean,
  withCurrencyPrices,
} from '../wire-bridge.js';
import { familyParam, queryOf } from './route-params.js';

/**
 * `{"coupon":{...}}` bodies, with each coupon's family name; the site's families are read once.
 * Asked with `currency_prices=true`, each carries `currency_prices`: empty, since a site has one
 * currency and it is the coupon's primary pricing.
 */
async function couponBodies(c: HttpContext, coupons: readonly CouponRecord[]) {
  const families = new Map<number, ProductFamilyRecord>(
    (await c.var.site.catalog.listFamilies()).map((family) => [family.id, family]),
  );
  const context = await wireContext(c);
  const withPrices = wireBoolean.safeParse(queryOf(c).currency_prices).data === true;
  return coupons.map((coupon) => {
    const body = serializeCoupon(coupon, context, families.get(coupon.familyId));
    return withPrices ? { coupon: withCurrencyPrices(body.coupon) } : body;
  });
}

/**
 * Runs a coupon currency-price command, answering its validation refusals as the SDK reads them
 * for this endpoint (`ErrorStringMapResponse`): a map of field to one message string.
 */
async function asStringMap(work: () => Promise<never>): Promise<Response> {
  try {
    return await work();
  } catch (error) {
    if (!isBillingError(error, 'validation')) throw error;
    const errors: Record<string, string> = {};
    for (const detail of error.details) {
      const key = detail.attribute ?? 'base';
      errors[key] = errors[key] === undefined ? detail.message : `${errors[key]} ${detail.message}`;
    }
    return sendJson(422, { errors });
  }
}

/** The coupon `id` of a path under `/product_families/{fid}/`, checked to be in that family. */
async function couponInFamily(c: HttpContext): Promise<CouponRecord> {
  const family = await c.var.site.catalog.getFamily(familyParam(c, 'fid'));
  const id = idParam(c, 'id', 'Coupon');
  const coupon = await c.var.site.coupons.get(id);
  if (coupon.familyId !== family.id) throw notFound('Coupon', id);
  return coupon;
}

async function couponBody(c: HttpContext, coupon: CouponRecord) {
  const [body] = await couponBodies(c, [coupon]);
  return body;
}

/**
 * Coupons: create (in a family by path or by `product_family_id`), list, read,
 * update, archive, find by code and validate a code. Find and validate answer a miss with the
 * service's 404 `{"errors":"Coupon code could not be found."}`, whose `errors` is a string.
 */
export function registerCouponRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/product_families/:id/coupons.json', async (c) => {
    const family = await c.var.site.catalog.getFamily(familyParam(c, 'id'));
    const body = await readJsonBody(c);
    const input = parseWireRequest(couponRequest, body);
    refuseUniquenessToken(body);
    // The path names the family; a body's own product_family_id cannot move the coupon elsewhere.
    const coupon = await c.var.site.coupons.create({ ...input, productFamilyId: family.id });
    return sendJson(201, await couponBody(c, coupon));
  });

  app.post('/coupons.json', async (c) => {
    const body = await readJsonBody(c);
    const input = parseWireRequest(couponRequest, body);
    refuseUniquenessToken(body);
    return sendJson(201, await couponBody(c, await c.var.site.coupons.create(input)));
  });

  app.get('/coupons.json', async (c) => {
    const page = couponListQuery.parse(queryOf(c));
    return sendJson(200, await couponBodies(c, await c.var.site.coupons.list(page)));
  });

  // Registered before `/coupons/{id}.json`, which would otherwise read `find` and `validate` as ids.
  app.get('/coupons/find.json', async (c) => {
    const query = parseWireParams(couponCodeQuery, queryOf(c), 'query');
    return sendJson(200, await couponBody(c, await c.var.site.coupons.findByCode(query.code)));
  });

  app.get('/coupons/validate.json', async (c) => {
    const query = parseWireParams(couponCodeQuery, queryOf(c), 'query');
    return sendJson(200, await couponBody(c, await c.var.site.coupons.validate(query.code, query.options)));
  });

  app.get('/product_families/:id/coupons/validate.json', async (c) => {
    const productFamilyId = familyParam(c, 'id');
    const query = parseWireParams(couponCodeQuery, queryOf(c), 'query');
    const coupon = await c.var.site.coupons.validate(query.code, { productFamilyId });
    return sendJson(200, await couponBody(c, coupon));
  });

  // The SDK's family paths: a family's coupons, and one coupon read, changed or archived under its
  // family (a coupon of another family is not found there).
  app.get('/product_families/:id/coupons.json', async (c) => {
    const page = couponListQuery.parse(queryOf(c));
    const coupons = await c.var.site.coupons.list({ ...page, familyId: familyParam(c, 'id') });
    return sendJson(200, await couponBodies(c, coupons));
  });

  app.get(`/product_families/:fid/coupons/:id${JSON_SEGMENT}`, async (c) => {
    return sendJson(200, await couponBody(c, await couponInFamily(c)));
  });

  app.put(`/product_families/:fid/coupons/:id${JSON_SEGMENT}`, async (c) => {
    const current = await couponInFamily(c);
    const body = await readJsonBody(c);
    const input = parseWireRequest(couponRequest, body);
    refuseUniquenessToken(body);
    return sendJson(200, await couponBody(c, await c.var.site.coupons.update(current.id, input)));
  });

  app.delete(`/product_families/:fid/coupons/:id${JSON_SEGMENT}`, async (c) => {
    const current = await couponInFamily(c);
    return sendJson(200, await couponBody(c, await c.var.site.coupons.archive(current.id)));
  });

  // Subcodes: more codes that apply the coupon. Create and replace answer which codes were
  // created, which were already taken and which were not valid codes.
  app.post('/coupons/:id/codes.json', async (c) => {
    const id = idParam(c, 'id', 'Coupon');
    const codes = readSubcodesBody(await readJsonBody(c));
    return sendJson(200, serializeSubcodesResult(await c.var.site.coupons.createSubcodes(id, codes)));
  });

  app.put('/coupons/:id/codes.json', async (c) => {
    const id = idParam(c, 'id', 'Coupon');
    const codes = readSubcodesBody(await readJsonBody(c));
    return sendJson(200, serializeSubcodesResult(await c.var.site.coupons.replaceSubcodes(id, codes)));
  });

  app.get('/coupons/:id/codes.json', async (c) => {
    const id = idParam(c, 'id', 'Coupon');
    const codes = await c.var.site.coupons.listSubcodes(id, pageQuery.parse(queryOf(c)));
    return sendJson(200, { codes });
  });

  // The subcode is percent-encoded in the path (`20%25OFF`); the router hands it on decoded.
  app.delete(`/coupons/:id/codes/:subcode${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Coupon');
    await c.var.site.coupons.deleteSubcode(id, stripJsonSuffix(c.req.param('subcode') ?? ''));
    return sendJson(200, {});
  });

  // Prices in other currencies: a site has one, so the engine refuses every request (see
  // currency-prices.ts) after its checks: the body, the coupon (404), a percentage coupon.
  app.put('/coupons/:id/currency_prices.json', async (c) => {
    const id = idParam(c, 'id', 'Coupon');
    const body = await readJsonBody(c);
    return asStringMap(() => c.var.site.coupons.createOrUpdateCurrencyPrices(id, parseCouponCurrencyPrices(body)));
  });

  app.get('/product_families/:fid/coupons/:id/usage.json', async (c) => {
    const familyId = familyParam(c, 'fid');
    const rows = await c.var.site.coupons.usage(idParam(c, 'id', 'Coupon'), familyId);
    return sendJson(200, serializeCouponUsage(rows, await wireContext(c)));
  });

  app.get(`/coupons/:id${JSON_SEGMENT}`, async (c) => {
    const coupon = await c.var.site.coupons.get(idParam(c, 'id', 'Coupon'));
    return sendJson(200, await couponBody(c, coupon));
  });

  app.put(`/coupons/:id${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Coupon');
    const body = await readJsonBody(c);
    const input = parseWireRequest(couponRequest, body);
    refuseUniquenessToken(body);
    return sendJson(200, await couponBody(c, await c.var.site.coupons.update(id, input)));
  });

  // Archives: the coupon can no longer be added, while subscriptions that have it keep the discount.
  app.delete(`/coupons/:id${JSON_SEGMENT}`, async (c) => {
    const coupon = await c.var.site.coupons.archive(idParam(c, 'id', 'Coupon'));
    return sendJson(200, await couponBody(c, coupon));
  });
}
