/** The table of customers' billing-portal access (see `schema.ts`; migration 19). */
import type { BooleanColumn, IdColumn, InstantColumn, Int8Column, NullableInstantColumn } from './schema.js';

/** `portal_access`: one row per customer whose portal access was ever enabled. */
export interface PortalAccessTable {
  id: IdColumn;
  site_id: Int8Column;
  customer_id: Int8Column;
  enabled: BooleanColumn;
  created_at: InstantColumn;
  invite_last_sent_at: NullableInstantColumn;
  invite_last_accepted_at: NullableInstantColumn;
  revoked_at: NullableInstantColumn;
  updated_at: InstantColumn;
}

/** The portal access table, by name. */
export interface PortalAccessTables {
  portal_access: PortalAccessTable;
}
