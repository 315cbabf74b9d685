/** Offers on SQL (migration 21): one row each, its components and coupon ids as JSON lists. */
import { BillingError, type OfferItemRecord, type OfferRecord, type OffersRepository } from 'billing-engine';
import type { Selectable } from 'kysely';
import { decodeId, decodeInstant, decodeInteger, decodeNullableInstant } from '../codecs.js';
import type { OffersTable } from '../schema-offers.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the offers repository of one transaction. */
export function createOffersRepository(context: RepositoryContext): OffersRepository {
  const { db, encode } = context;
  return {
    async insert(offer) {
      const row = await db
        .insertInto('offers')
        .values({
          site_id: offer.siteId,
          name: offer.name,
          handle: offer.handle,
          description: offer.description,
          product_id: offer.productId,
          product_price_point_id: offer.productPricePointId,
          items: encode.json(offer.items),
          coupon_ids: encode.json(offer.couponIds),
          archived_at: encode.nullableInstant(offer.archivedAt),
          created_at: encode.instant(offer.createdAt),
          updated_at: encode.instant(offer.updatedAt),
        })
        .onConflict((oc) => oc.columns(['site_id', 'handle']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) throw new BillingError('conflict', 'Offer handle is already taken.');
      return decodeOffer(row);
    },

    async findById(siteId, id) {
      const row = await db
        .selectFrom('offers')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && decodeOffer(row);
    },

    async findByHandle(siteId, handle) {
      const row = await db
        .selectFrom('offers')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('handle', '=', handle)
        .executeTakeFirst();
      return row && decodeOffer(row);
    },

    async list(siteId, options) {
      let query = db.selectFrom('offers').selectAll().where('site_id', '=', siteId);
      if (options.includeArchived !== true) query = query.where('archived_at', 'is', null);
      const rows = await query.orderBy('id').limit(options.limit).offset(options.offset).execute();
      return rows.map(decodeOffer);
    },

    async setArchived(siteId, id, archivedAt, now) {
      const row = await db
        .updateTable('offers')
        .set({ archived_at: encode.nullableInstant(archivedAt), updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && decodeOffer(row);
    },
  };
}

/** A JSON list read back (TEXT from SQLite, already parsed jsonb from pg). */
function decodeJsonList(value: unknown): unknown[] {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw new BillingError('storage', 'Cannot parse a stored JSON document.', { cause: error });
    }
  }
  if (!Array.isArray(parsed)) throw new BillingError('storage', 'An offer column does not hold a JSON list.');
  return parsed;
}

function decodeItem(value: unknown): OfferItemRecord {
  if (value === null || typeof value !== 'object') throw new BillingError('storage', 'An offer item is not an object.');
  const item = value as Record<string, unknown>;
  return {
    componentId: decodeId(item.componentId),
    pricePointId: item.pricePointId === null || item.pricePointId === undefined ? null : decodeId(item.pricePointId),
    startingQuantity: decodeInteger(item.startingQuantity, 'an offer starting quantity'),
  };
}

function decodeOffer(row: Selectable<OffersTable>): OfferRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    name: row.name,
    handle: row.handle,
    description: row.description,
    productId: decodeId(row.product_id),
    productPricePointId: row.product_price_point_id === null ? null : decodeId(row.product_price_point_id),
    items: decodeJsonList(row.items).map(decodeItem),
    couponIds: decodeJsonList(row.coupon_ids).map((id) => decodeId(id)),
    archivedAt: decodeNullableInstant(row.archived_at),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}
