/** The wire format of offer requests: `POST /offers.json` and the offer list's query. */
import { z } from 'zod';
import type { ListOffersOptions, OfferComponentInput, OfferInput } from '../services/offer-service.js';
import { pageQuery } from './list-query.js';
import { defineWireRequest } from './wire-request.js';
import { wireBoolean, wireId, wireText } from './wire-scalars.js';

/**
 * A starting quantity as clients send it: a number, or a string of one (`"2"`, or `"2.0"` as the
 * service writes it back). Passed on for the engine to check that it is whole and not negative.
 */
const startingQuantity = z
  .unknown()
  .transform((v, ctx): number | string | undefined => {
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v === 'number') return v;
    if (typeof v === 'string') return /^\s*\d+(\.0+)?\s*$/.test(v) ? Number(v.trim()) : v;
    ctx.addIssue({ code: 'custom', message: 'must be a number.' });
    return z.NEVER;
  })
  .optional();

/** One of `components[]`: `component_id`, `price_point_id` (its default when omitted), `starting_quantity`. */
const offerComponentFields = z
  .object(
    {
      component_id: wireId.nullish(),
      price_point_id: wireId.nullish(),
      starting_quantity: startingQuantity,
    },
    { error: 'must be an object.' },
  )
  .transform(
    (c): OfferComponentInput => ({
      ...(c.component_id == null ? {} : { componentId: c.component_id }),
      ...(c.price_point_id == null ? {} : { pricePointId: c.price_point_id }),
      ...(c.starting_quantity === undefined ? {} : { startingQuantity: c.starting_quantity }),
    }),
  );

/**
 * The fields of `{"offer":{...}}`: `name`, `handle`, `description`, `product_id`,
 * `product_price_point_id`, `components[]` and `coupons[]` (codes). The JSON types are settled
 * here; the engine checks the rest (blank or taken values, unknown records) and reports every
 * problem at once.
 */
export const offerFields = z
  .object(
    {
      name: wireText.nullish(),
      handle: wireText.nullish(),
      description: wireText.nullish(),
      product_id: wireId.nullish(),
      product_price_point_id: wireId.nullish(),
      components: z.array(offerComponentFields, { error: 'must be a list of components.' }).nullish(),
      coupons: z.array(wireText, { error: 'must be a list of coupon codes.' }).nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform(
    (o): OfferInput => ({
      ...(o.name == null ? {} : { name: o.name }),
      ...(o.handle == null ? {} : { handle: o.handle }),
      ...(o.description == null ? {} : { description: o.description }),
      ...(o.product_id == null ? {} : { productId: o.product_id }),
      ...(o.product_price_point_id == null ? {} : { productPricePointId: o.product_price_point_id }),
      ...(o.components == null ? {} : { components: o.components }),
      ...(o.coupons == null ? {} : { coupons: o.coupons }),
    }),
  );

/** `POST /offers.json`: body `{"offer":{...}}`. */
export const offerRequest = defineWireRequest('offer', offerFields);

/**
 * The query of `GET /offers.json`: `page`, `per_page` (read leniently, like every list) and
 * `include_archived` (archived offers are left out unless it is true).
 */
export function readOfferListQuery(query: Readonly<Record<string, unknown>>): ListOffersOptions {
  const page = pageQuery.parse(query);
  const includeArchived = wireBoolean.safeParse(query.include_archived).data === true;
  return { page: page.page, perPage: page.perPage, includeArchived };
}
