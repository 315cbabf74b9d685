/** Tables of product and component price points (see `schema.ts`). */
import type { ColumnType } from 'kysely';
import type { IdColumn, InstantColumn, Int8Column, Int8Value, NullableInstantColumn } from './schema.js';

/** `product_price_points`: identity of a price point; its terms are `product_versions` rows. */
export interface ProductPricePointsTable {
  id: IdColumn;
  site_id: Int8Column;
  product_id: Int8Column;
  name: string;
  handle: string;
  /** `default`, `catalog` or `custom`. */
  type: string;
  /** The `product_versions.version` holding the current terms. */
  version: ColumnType<number, number, number>;
  archived_at: NullableInstantColumn;
  created_at: InstantColumn;
  updated_at: InstantColumn;
  /** The subscription a `custom` price point belongs to (migration 20); null for the others. */
  subscription_id: ColumnType<Int8Value | null, number | null | undefined, number | null>;
}

/** `component_price_points`: identity of a component price point; its pricing is `component_versions` rows. */
export interface ComponentPricePointsTable {
  id: IdColumn;
  site_id: Int8Column;
  component_id: Int8Column;
  name: string;
  handle: string;
  /** `default`, `catalog` or `custom`. */
  type: string;
  /** The `component_versions.version` holding the current pricing. */
  version: ColumnType<number, number, number>;
  archived_at: NullableInstantColumn;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** Tables of product and component price points, by table name. */
export interface PricePointTables {
  product_price_points: ProductPricePointsTable;
  component_price_points: ComponentPricePointsTable;
}
