/** The table of offers (see `schema.ts`; migration 21). */
import type { IdColumn, InstantColumn, Int8Column, JsonColumn, NullableInstantColumn } from './schema.js';

/**
 * `offers`: one row per offer. Its components (`items`: component id, price point id, starting
 * quantity) and coupon ids are JSON lists in the row: they are written once, with the offer, and
 * only ever read with it.
 */
export interface OffersTable {
  id: IdColumn;
  site_id: Int8Column;
  name: string;
  handle: string;
  description: string | null;
  product_id: Int8Column;
  product_price_point_id: Int8Column | null;
  items: JsonColumn;
  coupon_ids: JsonColumn;
  archived_at: NullableInstantColumn;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** The offer table, by name. */
export interface OfferTables {
  offers: OffersTable;
}
