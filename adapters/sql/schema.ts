/**
 * The Kysely view of the SQL schema that the numbered migrations build. Column types are the
 * union of what the two drivers hand back (better-sqlite3 returns INTEGER as a number, pg returns
 * int8 and NUMERIC as strings and timestamptz as a Date), so every read goes through the codecs in
 * `codecs.ts` before it reaches a port record.
 */
import type { ColumnType, Generated } from 'kysely';
import type { AccountTables } from './schema-accounts.js';
import type { OfferTables } from './schema-offers.js';
import type { PortalAccessTables } from './schema-portal-access.js';
import type { PricePointTables } from './schema-price-points.js';
import type { SiteExtraTables } from './schema-site-extras.js';

/** An int8 as a driver returns it: a number (SQLite) or a decimal string (pg). */
export type Int8Value = number | string | bigint;

/** An id assigned by the database (SQLite `INTEGER PRIMARY KEY`, Postgres identity). */
export type IdColumn = Generated<Int8Value>;

/** A bigint column written as a safe integer `number`. */
export type Int8Column = ColumnType<Int8Value, number, number>;

/** An instant as stored: epoch milliseconds (SQLite) or timestamptz(3) (Postgres); see `codecs.ts`. */
export type InstantColumn = ColumnType<Date | number | string, Date | number, Date | number>;

/** A nullable instant column. */
export type NullableInstantColumn = ColumnType<
  Date | number | string | null,
  Date | number | null | undefined,
  Date | number | null
>;

/** A JSON document: TEXT (SQLite) or jsonb (Postgres), always written as a JSON string. */
export type JsonColumn = ColumnType<unknown, string, string>;

/** `sites`: the tenants. The one table without `site_id`. */
export interface SitesTable {
  id: IdColumn;
  subdomain: string;
  name: string;
  currency: string;
  time_zone: string;
  date_format: string;
  time_format: string;
  mode: string;
  shared_key: string;
  settings: JsonColumn;
  version: ColumnType<number, number, number>;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `api_keys`: hashed API keys of the main API. */
export interface ApiKeysTable {
  id: IdColumn;
  site_id: Int8Column;
  name: string;
  prefix: string;
  secret_hash: string;
  created_at: InstantColumn;
  revoked_at: NullableInstantColumn;
}

/** `direct_credentials`: direct-post `api_id` / `api_secret` / hashed password. */
export interface DirectCredentialsTable {
  id: IdColumn;
  site_id: Int8Column;
  api_id: string;
  api_secret: string;
  api_password_hash: string;
  default_redirect_uri: string | null;
  created_at: InstantColumn;
  revoked_at: NullableInstantColumn;
}

/** `idempotency_keys`: insert-if-absent claims, keyed by `(site_id, scope, key)`. */
export interface IdempotencyKeysTable {
  site_id: Int8Column;
  scope: string;
  key: string;
  claimed_at: InstantColumn;
  expires_at: NullableInstantColumn;
}

/** `due_work`: scheduled work, unique per `(site_id, unique_key)`. */
export interface DueWorkTable {
  id: IdColumn;
  site_id: Int8Column;
  kind: string;
  subject_id: Int8Column;
  due_at: InstantColumn;
  unique_key: string;
  payload: JsonColumn;
  status: string;
  claimed_by: string | null;
  lease_until: NullableInstantColumn;
  attempts: ColumnType<number, number, number>;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `outbox_events`: the transactional outbox. */
export interface OutboxEventsTable {
  id: IdColumn;
  site_id: Int8Column;
  key: string;
  subject_type: string;
  subject_id: Int8Column;
  payload: JsonColumn;
  occurred_at: InstantColumn;
}

/** `billing_migrations`: which numbered migrations have been applied. Not tenant data, so no `site_id`. */
export interface BillingMigrationsTable {
  id: number;
  name: string;
  applied_at: InstantColumn;
}

/** Every table, for `Kysely<Database>`. A new repository adds its table here and in a migration. */
/** Every table; the feature files under `schema-*.ts` add theirs. */
export interface Database extends PricePointTables, SiteExtraTables, AccountTables, PortalAccessTables, OfferTables {
  sites: SitesTable;
  api_keys: ApiKeysTable;
  direct_credentials: DirectCredentialsTable;
  idempotency_keys: IdempotencyKeysTable;
  due_work: DueWorkTable;
  outbox_events: OutboxEventsTable;
  product_families: ProductFamiliesTable;
  products: ProductsTable;
  product_versions: ProductVersionsTable;
  customers: CustomersTable;
  payment_profiles: PaymentProfilesTable;
  subscriptions: SubscriptionsTable;
  ledger_transactions: LedgerTransactionsTable;
  payment_attempts: PaymentAttemptsTable;
  components: ComponentsTable;
  component_versions: ComponentVersionsTable;
  coupons: CouponsTable;
  metafields: MetafieldsTable;
  metadata: MetadataTable;
  notes: NotesTable;
  subscription_components: SubscriptionComponentsTable;
  allocations: AllocationsTable;
  usages: UsagesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhooks: WebhooksTable;
  direct_calls: DirectCallsTable;
  direct_post_claims: DirectPostClaimsTable;
  billing_migrations: BillingMigrationsTable;
  document_sequences: DocumentSequencesTable;
  invoices: InvoicesTable;
  credit_notes: CreditNotesTable;
  invoice_events: InvoiceEventsTable;
}

/** `product_families`, unique handle per site. */
export interface ProductFamiliesTable {
  id: IdColumn;
  site_id: Int8Column;
  name: string;
  handle: string;
  description: string | null;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `products`: identity and current version; terms live in `product_versions`. */
export interface ProductsTable {
  id: IdColumn;
  site_id: Int8Column;
  family_id: Int8Column;
  handle: string;
  current_version: ColumnType<number, number, number>;
  archived_at: NullableInstantColumn;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `product_versions`: immutable terms documents, keyed by `(site_id, product_id, version)`. */
export interface ProductVersionsTable {
  site_id: Int8Column;
  product_id: Int8Column;
  version: ColumnType<number, number, number>;
  terms: JsonColumn;
  created_at: InstantColumn;
  /** The price point whose terms these are (migration 9); null only on rows older than it, which it backfills. */
  price_point_id: ColumnType<Int8Value | null, number | null | undefined, number | null>;
}

/** `customers`, unique non-null reference per site. */
export interface CustomersTable {
  id: IdColumn;
  site_id: Int8Column;
  first_name: string;
  last_name: string;
  email: string;
  reference: string | null;
  organization: string | null;
  phone: string | null;
  address: string | null;
  address2: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
  country: string | null;
  version: ColumnType<number, number, number>;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `payment_profiles`: vault tokens and displayable card facts, never a card number. */
export interface PaymentProfilesTable {
  id: IdColumn;
  site_id: Int8Column;
  customer_id: Int8Column;
  payment_type: string;
  vault_token: string;
  customer_vault_token: string | null;
  current_vault: string;
  card_type: string;
  last_four: string;
  expiration_month: ColumnType<number, number, number>;
  expiration_year: ColumnType<number, number, number>;
  first_name: string | null;
  last_name: string | null;
  billing_address: string | null;
  billing_address2: string | null;
  billing_city: string | null;
  billing_state: string | null;
  billing_zip: string | null;
  billing_country: string | null;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** A boolean as stored: INTEGER 0/1 (SQLite) or boolean (Postgres). */
export type BooleanColumn = ColumnType<boolean | number, boolean | number, boolean | number>;

/** A nullable boolean. */
export type NullableBooleanColumn = ColumnType<
  boolean | number | null,
  boolean | number | null | undefined,
  boolean | number | null
>;

/** A money column: integer minor units, written as a safe integer. */
export type MoneyColumn = ColumnType<Int8Value, number, number>;

/** `subscriptions`. `balance_in_cents` is the ledger's running balance, kept here so appends lock one row. */
export interface SubscriptionsTable {
  id: IdColumn;
  site_id: Int8Column;
  customer_id: Int8Column;
  product_id: Int8Column;
  product_version: ColumnType<number, number, number>;
  /** The merchant's own id of the subscription, unique per site when present (migration 10). */
  reference: ColumnType<string | null, string | null | undefined, string | null>;
  /** How the subscription's invoices are collected: `automatic` (charged) or `remittance` (left open; migration 15). */
  payment_collection_method: ColumnType<string, string | undefined, string>;
  payment_profile_id: ColumnType<Int8Value | null, number | null, number | null>;
  state: string;
  period_anchor_at: InstantColumn;
  period_index: ColumnType<number, number, number>;
  current_period_started_at: InstantColumn;
  current_period_ends_at: InstantColumn;
  next_assessment_at: NullableInstantColumn;
  trial_started_at: NullableInstantColumn;
  trial_ended_at: NullableInstantColumn;
  activated_at: NullableInstantColumn;
  canceled_at: NullableInstantColumn;
  expires_at: NullableInstantColumn;
  delayed_cancel_at: NullableInstantColumn;
  cancel_at_end_of_period: BooleanColumn;
  cancellation_message: string | null;
  cancellation_method: string | null;
  signup_payment_id: ColumnType<Int8Value | null, number | null, number | null>;
  signup_revenue_in_cents: MoneyColumn;
  coupon_codes: JsonColumn;
  referral_code: string | null;
  data: JsonColumn;
  version: ColumnType<number, number, number>;
  balance_in_cents: ColumnType<Int8Value, number | undefined, number>;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `ledger_transactions`: append-only ledger lines whose balances chain per subscription. */
export interface LedgerTransactionsTable {
  id: IdColumn;
  site_id: Int8Column;
  subscription_id: Int8Column;
  customer_id: Int8Column;
  type: string;
  kind: string | null;
  amount_in_cents: MoneyColumn;
  memo: string;
  success: NullableBooleanColumn;
  starting_balance_in_cents: MoneyColumn;
  ending_balance_in_cents: MoneyColumn;
  payment_id: ColumnType<Int8Value | null, number | null, number | null>;
  product_id: ColumnType<Int8Value | null, number | null, number | null>;
  component_id: ColumnType<Int8Value | null, number | null, number | null>;
  period_index: ColumnType<number | null, number | null, number | null>;
  gateway_transaction_id: string | null;
  refunded_amount_in_cents: MoneyColumn;
  created_at: InstantColumn;
}

/** `payment_attempts`, unique idempotency key per site. */
export interface PaymentAttemptsTable {
  id: IdColumn;
  site_id: Int8Column;
  subscription_id: ColumnType<Int8Value | null, number | null, number | null>;
  customer_id: ColumnType<Int8Value | null, number | null, number | null>;
  idempotency_key: string;
  amount_in_cents: MoneyColumn;
  currency: string;
  purpose: string;
  status: string;
  gateway_transaction_id: string | null;
  message: string | null;
  transaction_id: ColumnType<Int8Value | null, number | null, number | null>;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `components` of product families, unique non-null handle per site. */
export interface ComponentsTable {
  id: IdColumn;
  site_id: Int8Column;
  family_id: Int8Column;
  kind: string;
  name: string;
  handle: string | null;
  unit_name: string;
  description: string | null;
  taxable: BooleanColumn;
  current_version: ColumnType<number, number, number>;
  archived_at: NullableInstantColumn;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `component_versions`: immutable pricing documents, keyed by `(site_id, component_id, version)`. */
export interface ComponentVersionsTable {
  site_id: Int8Column;
  component_id: Int8Column;
  version: ColumnType<number, number, number>;
  pricing: JsonColumn;
  created_at: InstantColumn;
  /** The component price point whose pricing this is (migration 14). */
  price_point_id: ColumnType<Int8Value | null, number | null | undefined, number | null>;
}

/** An exact decimal as stored: TEXT (SQLite) or NUMERIC (Postgres, returned as a string). */
export type NullableDecimalColumn = ColumnType<string | null, string | null, string | null>;

/** `coupons`, unique code per site. */
export interface CouponsTable {
  id: IdColumn;
  site_id: Int8Column;
  family_id: Int8Column;
  name: string;
  code: string;
  description: string | null;
  percentage: NullableDecimalColumn;
  amount_in_cents: ColumnType<Int8Value | null, number | null, number | null>;
  recurring: BooleanColumn;
  duration_period_count: ColumnType<number | null, number | null, number | null>;
  end_date: NullableInstantColumn;
  allow_negative_balance: BooleanColumn;
  stackable: BooleanColumn;
  compounding_strategy: string;
  conversion_limit: ColumnType<number | null, number | null, number | null>;
  redemptions: ColumnType<number, number, number>;
  archived_at: NullableInstantColumn;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `metafields`: custom field definitions, unique name per site and resource type. */
export interface MetafieldsTable {
  id: IdColumn;
  site_id: Int8Column;
  resource_type: string;
  name: string;
  input_type: string;
  enum_values: ColumnType<unknown, string | null, string | null>;
  scope: JsonColumn;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `metadata`: one value per field and resource. */
export interface MetadataTable {
  id: IdColumn;
  site_id: Int8Column;
  resource_type: string;
  resource_id: Int8Column;
  metafield_id: Int8Column;
  name: string;
  value: string;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `notes` on subscriptions. */
export interface NotesTable {
  id: IdColumn;
  site_id: Int8Column;
  subscription_id: Int8Column;
  body: string;
  sticky: BooleanColumn;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** A bigint count written as a safe integer. */
export type BigIntegerColumn = ColumnType<Int8Value, number, number>;

/** `subscription_components`: one row per component of a subscription. */
export interface SubscriptionComponentsTable {
  id: IdColumn;
  site_id: Int8Column;
  subscription_id: Int8Column;
  component_id: Int8Column;
  component_version: ColumnType<number, number, number>;
  allocated_quantity: BigIntegerColumn;
  unit_balance: BigIntegerColumn;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `allocations`: allocation history. */
export interface AllocationsTable {
  id: IdColumn;
  site_id: Int8Column;
  subscription_id: Int8Column;
  component_id: Int8Column;
  previous_quantity: BigIntegerColumn;
  quantity: BigIntegerColumn;
  memo: string | null;
  upgrade_charge: string | null;
  downgrade_credit: string | null;
  accrue_charge: BooleanColumn;
  created_at: InstantColumn;
}

/** `usages`: metered usage records. */
export interface UsagesTable {
  id: IdColumn;
  site_id: Int8Column;
  subscription_id: Int8Column;
  component_id: Int8Column;
  quantity: BigIntegerColumn;
  memo: string | null;
  created_at: InstantColumn;
}

/** `webhook_endpoints`: merchant URLs and the events they receive. */
export interface WebhookEndpointsTable {
  id: IdColumn;
  site_id: Int8Column;
  url: string;
  events: JsonColumn;
  status: string;
  failure_count: ColumnType<number, number, number>;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `webhooks`: one signed body per event and endpoint. */
export interface WebhooksTable {
  id: IdColumn;
  site_id: Int8Column;
  endpoint_id: Int8Column;
  event_id: ColumnType<Int8Value | null, number | null, number | null>;
  event_key: string;
  body: string;
  status: string;
  attempts: ColumnType<number, number, number>;
  last_sent_at: NullableInstantColumn;
  last_sent_url: string | null;
  last_error: string | null;
  last_error_at: NullableInstantColumn;
  accepted_at: NullableInstantColumn;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/**
 * `direct_post_claims`: replay claims of signed direct posts, unique per `(site_id, input_hash)`
 * and per `(site_id, nonce_key)` where a nonce key is set (migration 6).
 */
export interface DirectPostClaimsTable {
  site_id: Int8Column;
  input_hash: string;
  nonce_key: string | null;
  created_at: InstantColumn;
}

/** `direct_calls`: direct-post call records, keyed by `(site_id, id)` with a 40-hex id. */
export interface DirectCallsTable {
  site_id: Int8Column;
  id: string;
  api_id: string;
  nonce: string | null;
  timestamp: string | null;
  success: BooleanColumn;
  request: JsonColumn;
  response: JsonColumn;
  created_at: InstantColumn;
}

/** `document_sequences`: the last number taken in each numbering series of a site. */
export interface DocumentSequencesTable {
  site_id: Int8Column;
  series: string;
  last_value: Int8Column;
}

/** `invoices`: the filterable columns beside the whole record as a JSON document. */
export interface InvoicesTable {
  id: IdColumn;
  site_id: Int8Column;
  uid: string;
  /** Null (with `number`) while the invoice is a draft (migration 8). */
  sequence_number: ColumnType<Int8Value | null, number | null, number | null>;
  number: string | null;
  subscription_id: Int8Column;
  customer_id: Int8Column;
  status: string;
  issue_date: string;
  due_date: string;
  paid_date: string | null;
  document: JsonColumn;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** `credit_notes`: like invoices, a document beside its keys. */
export interface CreditNotesTable {
  id: IdColumn;
  site_id: Int8Column;
  uid: string;
  sequence_number: Int8Column;
  invoice_uid: string;
  subscription_id: Int8Column;
  document: JsonColumn;
  created_at: InstantColumn;
}

/** `invoice_events`: an invoice's history. */
export interface InvoiceEventsTable {
  id: IdColumn;
  site_id: Int8Column;
  invoice_uid: string;
  event_type: string;
  data: JsonColumn;
  created_at: InstantColumn;
}
