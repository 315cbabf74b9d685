/** Tables of prepayments, service credits and data exports (see `schema.ts`). */
import type {
  BooleanColumn,
  IdColumn,
  InstantColumn,
  Int8Column,
  JsonColumn,
  MoneyColumn,
  NullableInstantColumn,
} from './schema.js';

/** Tables of prepayments, service credits and data exports, by table name. */
export interface AccountTables {
  account_entries: AccountEntriesTable;
  data_exports: DataExportsTable;
  data_export_rows: DataExportRowsTable;
}

/** `account_entries`: movements of subscriptions' prepayment and service-credit accounts. */
export interface AccountEntriesTable {
  id: IdColumn;
  site_id: Int8Column;
  subscription_id: Int8Column;
  account: string;
  entry_type: string;
  amount_in_cents: MoneyColumn;
  memo: string;
  details: string | null;
  method: string | null;
  external: BooleanColumn;
  prepayment_id: Int8Column | null;
  transaction_id: Int8Column;
  created_at: InstantColumn;
}

/** `data_exports`: export jobs. */
export interface DataExportsTable {
  id: IdColumn;
  site_id: Int8Column;
  kind: string;
  status: string;
  row_count: Int8Column | null;
  created_at: InstantColumn;
  finished_at: NullableInstantColumn;
}

/** `data_export_rows`: the rows of finished export jobs, one serialized record each. */
export interface DataExportRowsTable {
  id: IdColumn;
  site_id: Int8Column;
  export_id: Int8Column;
  row: JsonColumn;
}
