import type { Hono } from 'hono';
// The offer wire modules are not (yet) exported by `billing-engine/chargify`, whose export list a
// snapshot test guards; they are reached directly, as the proforma routes reach theirs.
import { offerRequest, readOfferListQuery } from '../../../src/wire/offer-request.js';
import { serializeOffer, serializeOfferList } from '../../../src/wire/serialize-offer.js';
import { type HttpAppEnv, idParam, JSON_SEGMENT, readJsonBody, sendJson, wireContext } from '../http-context.js';
import { parseWireRequest } from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/**
 * Offers (the official SDK's `OffersController`): create, list (`include_archived`), read,
 * archive and unarchive. Every answer but the list is `{"offer":{...}}`; the list is
 * `{"offers":[...]}`.
 */
export function registerOfferRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/offers.json', async (c) => {
    const input = parseWireRequest(offerRequest, await readJsonBody(c));
    const offer = await c.var.site.offers.create(input);
    return sendJson(201, serializeOffer(offer, await wireContext(c)));
  });

  app.get('/offers.json', async (c) => {
    const offers = await c.var.site.offers.list(readOfferListQuery(queryOf(c)));
    return sendJson(200, serializeOfferList(offers, await wireContext(c)));
  });

  app.get(`/offers/:id${JSON_SEGMENT}`, async (c) => {
    const offer = await c.var.site.offers.get(idParam(c, 'id', 'Offer'));
    return sendJson(200, serializeOffer(offer, await wireContext(c)));
  });

  app.put('/offers/:id/archive.json', async (c) => {
    const offer = await c.var.site.offers.archive(idParam(c, 'id', 'Offer'));
    return sendJson(200, serializeOffer(offer, await wireContext(c)));
  });

  app.put('/offers/:id/unarchive.json', async (c) => {
    const offer = await c.var.site.offers.unarchive(idParam(c, 'id', 'Offer'));
    return sendJson(200, serializeOffer(offer, await wireContext(c)));
  });
}
