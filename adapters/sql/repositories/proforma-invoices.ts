/**
 * Proforma invoices on SQL (migration 16). Each is one JSON document beside the columns that lists
 * filter and sort on; numbers come from the site's `document_sequences` row of the `proforma`
 * series, bumped by an upsert like the invoice series, so concurrent creators never share one.
 */
import { BillingError, type ProformaInvoiceRecord, type ProformaInvoicesRepository } from 'billing-engine';
import { type Kysely, type Selectable, sql } from 'kysely';
import { decodeId, decodeInstant, decodeInteger, decodeJsonObject, decodeNullableInstant } from '../codecs.js';
import type { Database, IdColumn, InstantColumn, Int8Column, JsonColumn, NullableInstantColumn } from '../schema.js';
import { withConstraintConflict } from './constraint-conflict.js';
import type { RepositoryContext } from './repository-context.js';

/** `proforma_invoices` (migration 16). */
export interface ProformaInvoicesTable {
  id: IdColumn;
  site_id: Int8Column;
  uid: string;
  number: Int8Column;
  subscription_id: Int8Column | null;
  customer_id: Int8Column | null;
  status: string;
  delivery_date: string;
  document: JsonColumn;
  created_at: InstantColumn;
  voided_at: NullableInstantColumn;
}

/** The tables this repository reads beside the shared schema. */
export type ProformaTables = {
  proforma_invoices: ProformaInvoicesTable;
};

/** The numbering series of proforma invoices in `document_sequences`. */
const SERIES = 'proforma';

/** The record fields that live in columns rather than in the document. */
const COLUMNS: readonly string[] = [
  'id',
  'siteId',
  'uid',
  'number',
  'subscriptionId',
  'customerId',
  'status',
  'deliveryDate',
  'createdAt',
  'voidedAt',
];

function documentOf(record: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (!COLUMNS.includes(key)) out[key] = value;
  return out;
}

/** The Kysely instance with the proforma table added to the schema's tables. */
export function proformaDb(db: Kysely<Database>): Kysely<Database & ProformaTables> {
  return db.withTables<ProformaTables>();
}

/** Builds the proforma invoices repository of one transaction. */
export function createProformaInvoicesRepository(context: RepositoryContext): ProformaInvoicesRepository {
  const { encode } = context;
  const db = proformaDb(context.db);
  return {
    async nextNumber(siteId) {
      const row = await db
        .insertInto('document_sequences')
        .values({ site_id: siteId, series: SERIES, last_value: 1 })
        .onConflict((oc) =>
          oc.columns(['site_id', 'series']).doUpdateSet({ last_value: sql`document_sequences.last_value + 1` }),
        )
        .returning('last_value')
        .executeTakeFirstOrThrow();
      return decodeInteger(row.last_value, 'a proforma invoice number');
    },

    async insert(proforma) {
      const row = await withConstraintConflict(
        context,
        'unique',
        () => new BillingError('conflict', 'Proforma invoice number or uid is already taken.'),
        () =>
          db
            .insertInto('proforma_invoices')
            .values({
              site_id: proforma.siteId,
              uid: proforma.uid,
              number: proforma.number,
              subscription_id: proforma.subscriptionId,
              customer_id: proforma.customerId,
              status: proforma.status,
              delivery_date: proforma.deliveryDate,
              document: encode.json(documentOf(proforma)),
              created_at: encode.instant(proforma.createdAt),
              voided_at: proforma.voidedAt === null ? null : encode.instant(proforma.voidedAt),
            })
            .returningAll()
            .executeTakeFirstOrThrow(),
      );
      return decodeProforma(row);
    },

    async findByUid(siteId, uid) {
      const row = await db
        .selectFrom('proforma_invoices')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('uid', '=', uid)
        .executeTakeFirst();
      return row && decodeProforma(row);
    },

    async void(siteId, id, voidedAt, reason) {
      const current = await db
        .selectFrom('proforma_invoices')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (current === undefined) return undefined;
      const record = decodeProforma(current);
      // Conditional on the status, so of two concurrent voids only one changes the row.
      const row = await db
        .updateTable('proforma_invoices')
        .set({
          status: 'voided',
          voided_at: encode.instant(voidedAt),
          document: encode.json(documentOf({ ...record, voidReason: reason })),
        })
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .where('status', '=', 'draft')
        .returningAll()
        .executeTakeFirst();
      return row && decodeProforma(row);
    },

    async list(siteId, filter) {
      let query = db.selectFrom('proforma_invoices').where('site_id', '=', siteId);
      if (filter.subscriptionId !== undefined) query = query.where('subscription_id', '=', filter.subscriptionId);
      if (filter.status !== undefined) query = query.where('status', '=', filter.status);
      if (filter.deliveryFrom !== undefined) query = query.where('delivery_date', '>=', filter.deliveryFrom);
      if (filter.deliveryTo !== undefined) query = query.where('delivery_date', '<=', filter.deliveryTo);
      const counted = await query.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      const rows = await query
        .selectAll()
        .orderBy('number', filter.direction)
        .limit(filter.limit)
        .offset(filter.offset)
        .execute();
      return { proformaInvoices: rows.map(decodeProforma), total: decodeInteger(counted.n) };
    },
  };
}

/** Removes a site's proforma invoices when its customer data is cleared (called by site-data). */
export async function clearProformaData(db: Kysely<Database>, siteId: number): Promise<void> {
  await proformaDb(db).deleteFrom('proforma_invoices').where('site_id', '=', siteId).execute();
}

/**
 * Removes the proforma invoices of a purged subscription, and those of its customer that belong to
 * no subscription (signup proformas) when the customer is removed too. Returns how many.
 */
export async function purgeProformaRows(
  db: Kysely<Database>,
  siteId: number,
  subscriptionId: number,
  customerId: number | null,
): Promise<number> {
  const result = await proformaDb(db)
    .deleteFrom('proforma_invoices')
    .where('site_id', '=', siteId)
    .where((eb) =>
      eb.or([
        eb('subscription_id', '=', subscriptionId),
        ...(customerId === null
          ? []
          : [eb.and([eb('subscription_id', 'is', null), eb('customer_id', '=', customerId)])]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

function reviveDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  return decodeInstant(typeof value === 'string' ? new Date(value) : value);
}

function decodeProforma(row: Selectable<ProformaInvoicesTable>): ProformaInvoiceRecord {
  const doc = decodeJsonObject(row.document) as Record<string, unknown> & { lineItems: Record<string, unknown>[] };
  return {
    ...(doc as unknown as ProformaInvoiceRecord),
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    uid: row.uid,
    number: decodeInteger(row.number, 'a proforma invoice number'),
    subscriptionId: row.subscription_id === null ? null : decodeId(row.subscription_id),
    customerId: row.customer_id === null ? null : decodeId(row.customer_id),
    status: row.status === 'voided' ? 'voided' : 'draft',
    deliveryDate: row.delivery_date,
    periodStart: reviveDate(doc.periodStart),
    periodEnd: reviveDate(doc.periodEnd),
    lineItems: doc.lineItems.map((item) => ({
      ...(item as unknown as ProformaInvoiceRecord['lineItems'][number]),
      periodStart: reviveDate(item.periodStart),
      periodEnd: reviveDate(item.periodEnd),
    })),
    voidReason: typeof doc.voidReason === 'string' ? doc.voidReason : null,
    createdAt: decodeInstant(row.created_at),
    voidedAt: decodeNullableInstant(row.voided_at),
  };
}
