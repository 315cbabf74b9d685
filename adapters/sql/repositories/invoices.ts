/**
 * Invoices, credit notes and invoice events on SQL. Each document is one JSON column beside the
 * columns lists filter and sort on; the numbering counter is one row per site and series, bumped
 * by an upsert whose row lock makes concurrent issuers wait, so committed numbers have no gaps.
 */
import {
  BillingError,
  type CreditNoteRecord,
  type InvoiceEventRecord,
  type InvoiceRecord,
  type InvoicesRepository,
  type NewInvoiceEvent,
} from 'billing-engine';
import { type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import { decodeId, decodeInstant, decodeInteger, decodeJsonObject } from '../codecs.js';
import { compiledOnce } from '../compiled-once.js';
import type { CreditNotesTable, Database, InvoiceEventsTable, InvoicesTable } from '../schema.js';
import { withConstraintConflict } from './constraint-conflict.js';
import type { RepositoryContext } from './repository-context.js';

/** The invoice fields that live in columns rather than in the document. */
const INVOICE_COLUMNS = [
  'id',
  'siteId',
  'uid',
  'sequenceNumber',
  'number',
  'subscriptionId',
  'customerId',
  'status',
  'issueDate',
  'dueDate',
  'paidDate',
  'createdAt',
  'updatedAt',
] as const;

const CREDIT_NOTE_COLUMNS = [
  'id',
  'siteId',
  'uid',
  'sequenceNumber',
  'invoiceUid',
  'subscriptionId',
  'createdAt',
] as const;

function withoutKeys(record: object, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (!keys.includes(key)) out[key] = value;
  return out;
}

/** The row of an invoice event. */
function eventColumns(siteId: number, event: NewInvoiceEvent, encode: RepositoryContext['encode']) {
  return {
    site_id: siteId,
    invoice_uid: event.invoiceUid,
    event_type: event.eventType,
    data: encode.json(event.data),
    created_at: encode.instant(event.createdAt),
  };
}

/** A subscription's invoices (of one status), compiled once (see `compiled-once.ts`): twice per renewal. */
const subscriptionInvoicesIn = compiledOnce((db, siteId: number, subscriptionId: number, status: string) =>
  byNumber(
    db
      .selectFrom('invoices')
      .selectAll()
      .where('site_id', '=', siteId)
      .where('subscription_id', '=', subscriptionId)
      .where('status', '=', status),
    'asc',
  ),
);
const subscriptionInvoices = compiledOnce((db, siteId: number, subscriptionId: number) =>
  byNumber(
    db.selectFrom('invoices').selectAll().where('site_id', '=', siteId).where('subscription_id', '=', subscriptionId),
    'asc',
  ),
);

/** An invoice inserted, compiled once (see `compiled-once.ts`): every post that bills issues one. */
const insertInvoice = compiledOnce(
  (
    db,
    siteId: number,
    uid: string,
    sequenceNumber: number | null,
    number: string | null,
    subscriptionId: number,
    customerId: number,
    status: string,
    issueDate: string,
    dueDate: string,
    paidDate: string | null,
    document: string,
    createdAt: Date | number,
    updatedAt: Date | number,
  ) =>
    db
      .insertInto('invoices')
      .values({
        site_id: siteId,
        uid,
        sequence_number: sequenceNumber,
        number,
        subscription_id: subscriptionId,
        customer_id: customerId,
        status,
        issue_date: issueDate,
        due_date: dueDate,
        paid_date: paidDate,
        document,
        created_at: createdAt,
        updated_at: updatedAt,
      })
      .onConflict((oc) => oc.doNothing())
      .returningAll(),
);

/** An invoice saved, compiled once (see `compiled-once.ts`): every post updates the invoices it changed. */
const updateInvoice = compiledOnce(
  (
    db,
    number: string | null,
    sequenceNumber: number | null,
    status: string,
    issueDate: string,
    dueDate: string,
    paidDate: string | null,
    document: string,
    updatedAt: Date | number,
    siteId: number,
    id: number,
  ) =>
    db
      .updateTable('invoices')
      .set({
        // The number is set once: a draft's null takes the issued number, a stored one is kept.
        number: sql<string | null>`coalesce(number, ${number})`,
        sequence_number: sql<number | null>`coalesce(sequence_number, ${sequenceNumber})`,
        status,
        issue_date: issueDate,
        due_date: dueDate,
        paid_date: paidDate,
        document,
        updated_at: updatedAt,
      })
      .where('site_id', '=', siteId)
      .where('id', '=', id)
      .returningAll(),
);

/** Builds the invoices repository of one transaction. */
export function createInvoicesRepository(context: RepositoryContext): InvoicesRepository {
  const { db, encode } = context;
  const taken = (what: string) => () => new BillingError('conflict', `${what} is already taken.`);
  return {
    async nextSequence(siteId, series, count = 1) {
      if (!Number.isSafeInteger(count) || count < 1) {
        throw new RangeError(`nextSequence takes a positive whole count, not ${count}.`);
      }
      const row = await db
        .insertInto('document_sequences')
        .values({ site_id: siteId, series, last_value: count })
        .onConflict((oc) =>
          oc.columns(['site_id', 'series']).doUpdateSet({ last_value: sql`document_sequences.last_value + ${count}` }),
        )
        .returning('last_value')
        .executeTakeFirstOrThrow();
      return decodeInteger(row.last_value, 'a document number');
    },

    async insert(invoice) {
      // ON CONFLICT DO NOTHING, not a savepoint: a taken uid or number returns no row, and on
      // Postgres the transaction stays usable without the two statements a savepoint costs.
      const [row] = (
        await insertInvoice.run(
          context,
          invoice.siteId,
          invoice.uid,
          invoice.sequenceNumber,
          invoice.number,
          invoice.subscriptionId,
          invoice.customerId,
          invoice.status,
          invoice.issueDate,
          invoice.dueDate,
          invoice.paidDate,
          encode.json(withoutKeys(invoice, INVOICE_COLUMNS)),
          encode.instant(invoice.createdAt),
          encode.instant(invoice.updatedAt),
        )
      ).rows;
      if (row === undefined) throw taken('Invoice number or uid')();
      return decodeInvoice(row);
    },

    async update(invoice) {
      const [row] = (
        await updateInvoice.run(
          context,
          invoice.number,
          invoice.sequenceNumber,
          invoice.status,
          invoice.issueDate,
          invoice.dueDate,
          invoice.paidDate,
          encode.json(withoutKeys(invoice, INVOICE_COLUMNS)),
          encode.instant(invoice.updatedAt),
          invoice.siteId,
          invoice.id,
        )
      ).rows;
      return row && decodeInvoice(row);
    },

    async deleteDraft(siteId, id) {
      const result = await db
        .deleteFrom('invoices')
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .where('status', '=', 'draft')
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async findById(siteId, id) {
      const row = await db
        .selectFrom('invoices')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && decodeInvoice(row);
    },

    async findByUid(siteId, uid) {
      const row = await db
        .selectFrom('invoices')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('uid', '=', uid)
        .executeTakeFirst();
      return row && decodeInvoice(row);
    },

    async listForSubscription(siteId, subscriptionId, status) {
      const { rows } =
        status === undefined
          ? await subscriptionInvoices.run(context, siteId, subscriptionId)
          : await subscriptionInvoicesIn.run(context, siteId, subscriptionId, status);
      return rows.map(decodeInvoice);
    },

    async list(siteId, filter) {
      const filtered = <O>(query: SelectQueryBuilder<Database, 'invoices', O>) => {
        let q = query.where('site_id', '=', siteId);
        if (filter.status !== undefined) q = q.where('status', '=', filter.status);
        if (filter.subscriptionId !== undefined) q = q.where('subscription_id', '=', filter.subscriptionId);
        if (filter.customerId !== undefined) q = q.where('customer_id', '=', filter.customerId);
        if (filter.number !== undefined) q = q.where('number', '=', filter.number);
        if (filter.localDates) {
          const { field, from, to } = filter.localDates;
          if (field === 'paid_date') q = q.where('paid_date', 'is not', null);
          if (from !== undefined) q = q.where(field, '>=', from);
          if (to !== undefined) q = q.where(field, '<=', to);
        }
        if (filter.instants) {
          const { field, from, until } = filter.instants;
          if (from !== undefined) q = q.where(field, '>=', encode.instant(from));
          if (until !== undefined) q = q.where(field, '<', encode.instant(until));
        }
        return q;
      };
      const rows = await byNumber(filtered(db.selectFrom('invoices').selectAll()), filter.direction)
        .limit(Math.max(0, filter.limit))
        .offset(Math.max(0, filter.offset))
        .execute();
      const invoices = rows.map(decodeInvoice);
      // A page that is not full tells the total by itself (the payment webhook's lookup of the
      // invoice it paid reads a few rows, once per renewal: issue 18); only a full page, or an
      // empty one past the first, needs the count.
      const offset = Math.max(0, filter.offset);
      if (rows.length < filter.limit && (rows.length > 0 || offset === 0)) {
        return { invoices, total: offset + rows.length };
      }
      const count = await filtered(db.selectFrom('invoices'))
        .select((eb) => eb.fn.countAll().as('total'))
        .executeTakeFirstOrThrow();
      return { invoices, total: decodeInteger(count.total, 'a count') };
    },

    async insertCreditNote(note) {
      const row = await withConstraintConflict(context, 'unique', taken('Credit note number or uid'), () =>
        db
          .insertInto('credit_notes')
          .values({
            site_id: note.siteId,
            uid: note.uid,
            sequence_number: note.sequenceNumber,
            invoice_uid: note.invoiceUid,
            subscription_id: note.subscriptionId,
            document: encode.json(withoutKeys(note, CREDIT_NOTE_COLUMNS)),
            created_at: encode.instant(note.createdAt),
          })
          .returningAll()
          .executeTakeFirstOrThrow(),
      );
      return decodeCreditNote(row);
    },

    async findCreditNoteByUid(siteId, uid) {
      const row = await db
        .selectFrom('credit_notes')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('uid', '=', uid)
        .executeTakeFirst();
      return row && decodeCreditNote(row);
    },

    async listCreditNotes(siteId, filter) {
      const filtered = <O>(query: SelectQueryBuilder<Database, 'credit_notes', O>) => {
        let q = query.where('site_id', '=', siteId);
        if (filter.subscriptionId !== undefined) q = q.where('subscription_id', '=', filter.subscriptionId);
        if (filter.invoiceUid !== undefined) q = q.where('invoice_uid', '=', filter.invoiceUid);
        return q;
      };
      const rows = await filtered(db.selectFrom('credit_notes').selectAll())
        .orderBy('sequence_number', filter.direction)
        .limit(Math.max(0, filter.limit))
        .offset(Math.max(0, filter.offset))
        .execute();
      const count = await filtered(db.selectFrom('credit_notes'))
        .select((eb) => eb.fn.countAll().as('total'))
        .executeTakeFirstOrThrow();
      return { creditNotes: rows.map(decodeCreditNote), total: decodeInteger(count.total, 'a count') };
    },

    async appendEvent(siteId, event) {
      const row = await db
        .insertInto('invoice_events')
        .values(eventColumns(siteId, event, encode))
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeEvent(row);
    },

    async appendEvents(siteId, events) {
      if (events.length === 0) return [];
      const rows = await db
        .insertInto('invoice_events')
        .values(events.map((event) => eventColumns(siteId, event, encode)))
        .returningAll()
        .execute();
      // Ids are handed out in row order, but RETURNING promises no order: sorted, the answer
      // is in the order given.
      return rows.map(decodeEvent).sort((a, b) => a.id - b.id);
    },

    async listEvents(siteId, invoiceUid) {
      const rows = await db
        .selectFrom('invoice_events')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('invoice_uid', '=', invoiceUid)
        .orderBy('id')
        .execute();
      return rows.map(decodeEvent);
    },
  };
}

/** Issued invoices by number, then drafts (no number yet) by id; `desc` reverses the whole order. */
function byNumber<O>(
  query: SelectQueryBuilder<Database, 'invoices', O>,
  direction: 'asc' | 'desc',
): SelectQueryBuilder<Database, 'invoices', O> {
  return query
    .orderBy(sql`case when sequence_number is null then 1 else 0 end`, direction)
    .orderBy('sequence_number', direction)
    .orderBy('id', direction);
}

/** An ISO string of the document back to a Date (null stays null). */
function reviveDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  return decodeInstant(typeof value === 'string' ? new Date(value) : value);
}

function decodeInvoice(row: Selectable<InvoicesTable>): InvoiceRecord {
  const doc = decodeJsonObject(row.document) as Record<string, unknown> & {
    lineItems: Record<string, unknown>[];
    payments: Record<string, unknown>[];
    credits: Record<string, unknown>[];
  };
  return {
    ...(doc as unknown as InvoiceRecord),
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    uid: row.uid,
    sequenceNumber: row.sequence_number === null ? null : decodeInteger(row.sequence_number, 'an invoice number'),
    number: row.number,
    subscriptionId: decodeId(row.subscription_id),
    customerId: decodeId(row.customer_id),
    status: row.status as InvoiceRecord['status'],
    issueDate: row.issue_date,
    dueDate: row.due_date,
    paidDate: row.paid_date,
    periodStart: reviveDate(doc.periodStart),
    periodEnd: reviveDate(doc.periodEnd),
    lineItems: doc.lineItems.map((item) => ({
      ...(item as unknown as InvoiceRecord['lineItems'][number]),
      periodStart: reviveDate(item.periodStart),
      periodEnd: reviveDate(item.periodEnd),
    })),
    payments: doc.payments.map((payment) => ({
      ...(payment as unknown as InvoiceRecord['payments'][number]),
      appliedAt: reviveDate(payment.appliedAt)!,
    })),
    credits: doc.credits.map((credit) => ({
      ...(credit as unknown as InvoiceRecord['credits'][number]),
      appliedAt: reviveDate(credit.appliedAt)!,
    })),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

function decodeCreditNote(row: Selectable<CreditNotesTable>): CreditNoteRecord {
  const doc = decodeJsonObject(row.document);
  return {
    ...(doc as unknown as CreditNoteRecord),
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    uid: row.uid,
    sequenceNumber: decodeInteger(row.sequence_number, 'a credit note number'),
    invoiceUid: row.invoice_uid,
    subscriptionId: decodeId(row.subscription_id),
    createdAt: decodeInstant(row.created_at),
  };
}

function decodeEvent(row: Selectable<InvoiceEventsTable>): InvoiceEventRecord {
  return {
    id: decodeId(row.id),
    invoiceUid: row.invoice_uid,
    eventType: row.event_type as InvoiceEventRecord['eventType'],
    data: decodeJsonObject(row.data),
    createdAt: decodeInstant(row.created_at),
  };
}
