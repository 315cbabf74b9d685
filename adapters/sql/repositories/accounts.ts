/** Prepayments, service credits and data exports on SQL. */
import type {
  AccountEntryRecord,
  AccountEntryType,
  AccountName,
  AccountsRepository,
  ExportKind,
  ExportRecord,
  ExportsRepository,
} from 'billing-engine';
import type { Kysely, Selectable } from 'kysely';
import {
  decodeBoolean,
  decodeId,
  decodeInstant,
  decodeInteger,
  decodeJsonObject,
  decodeMoney,
  decodeNullableInstant,
  encodeMoney,
} from '../codecs.js';
import type { Database } from '../schema.js';
import type { AccountEntriesTable, DataExportsTable } from '../schema-accounts.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the accounts repository of one transaction. */
export function createAccountsRepository({ db, encode }: RepositoryContext): AccountsRepository {
  return {
    async insert(entry) {
      const row = await db
        .insertInto('account_entries')
        .values({
          site_id: entry.siteId,
          subscription_id: entry.subscriptionId,
          account: entry.account,
          entry_type: entry.entryType,
          amount_in_cents: encodeMoney(entry.amountInCents),
          memo: entry.memo,
          details: entry.details,
          method: entry.method,
          external: encode.boolean(entry.external),
          prepayment_id: entry.prepaymentId,
          transaction_id: entry.transactionId,
          created_at: encode.instant(entry.createdAt),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeEntry(row);
    },

    async findById(siteId, id) {
      const row = await db
        .selectFrom('account_entries')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && decodeEntry(row);
    },

    async listForSubscription(siteId, subscriptionId) {
      const rows = await db
        .selectFrom('account_entries')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('subscription_id', '=', subscriptionId)
        .orderBy('id')
        .execute();
      return rows.map(decodeEntry);
    },

    async list(siteId, filter, page) {
      let query = db
        .selectFrom('account_entries')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('subscription_id', '=', filter.subscriptionId);
      if (filter.entryTypes !== undefined) {
        if (filter.entryTypes.length === 0) return [];
        query = query.where('entry_type', 'in', [...filter.entryTypes]);
      }
      if (filter.since !== undefined) query = query.where('created_at', '>=', encode.instant(filter.since));
      if (filter.until !== undefined) query = query.where('created_at', '<=', encode.instant(filter.until));
      const rows = await query
        .orderBy('id')
        .limit(page.perPage)
        .offset((page.page - 1) * page.perPage)
        .execute();
      return rows.map(decodeEntry);
    },
  };
}

/** Builds the exports repository of one transaction. */
export function createExportsRepository({ db, encode }: RepositoryContext): ExportsRepository {
  return {
    async insert(job) {
      const row = await db
        .insertInto('data_exports')
        .values({
          site_id: job.siteId,
          kind: job.kind,
          status: 'pending',
          row_count: null,
          created_at: encode.instant(job.createdAt),
          finished_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeExport(row);
    },

    async findById(siteId, id) {
      const row = await db
        .selectFrom('data_exports')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && decodeExport(row);
    },

    async complete(siteId, id, rows, finishedAt) {
      // The conditional update claims the job first, so a second completion writes no rows.
      const updated = await db
        .updateTable('data_exports')
        .set({ status: 'completed', row_count: rows.length, finished_at: encode.instant(finishedAt) })
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .returningAll()
        .executeTakeFirst();
      if (updated === undefined) return undefined;
      // Bounded batches keep each INSERT under the dialects' parameter limits.
      for (let start = 0; start < rows.length; start += 200) {
        await db
          .insertInto('data_export_rows')
          .values(
            rows.slice(start, start + 200).map((row) => ({ site_id: siteId, export_id: id, row: encode.json(row) })),
          )
          .execute();
      }
      return decodeExport(updated);
    },

    async rows(siteId, id, page) {
      const rows = await db
        .selectFrom('data_export_rows')
        .select('row')
        .where('site_id', '=', siteId)
        .where('export_id', '=', id)
        .orderBy('id')
        .limit(page.perPage)
        .offset((page.page - 1) * page.perPage)
        .execute();
      return rows.map((r) => decodeJsonObject(r.row));
    },
  };
}

/** Removes a site's account and export rows when its customer data is cleared (called by site-data). */
export async function clearAccountData(db: Kysely<Database>, siteId: number): Promise<void> {
  await db.deleteFrom('account_entries').where('site_id', '=', siteId).execute();
  await db.deleteFrom('data_export_rows').where('site_id', '=', siteId).execute();
  await db.deleteFrom('data_exports').where('site_id', '=', siteId).execute();
}

function decodeEntry(row: Selectable<AccountEntriesTable>): AccountEntryRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    subscriptionId: decodeId(row.subscription_id),
    account: row.account as AccountName,
    entryType: row.entry_type as AccountEntryType,
    amountInCents: decodeMoney(row.amount_in_cents),
    memo: row.memo,
    details: row.details,
    method: row.method,
    external: decodeBoolean(row.external),
    prepaymentId: row.prepayment_id === null ? null : decodeId(row.prepayment_id),
    transactionId: decodeId(row.transaction_id),
    createdAt: decodeInstant(row.created_at),
  };
}

function decodeExport(row: Selectable<DataExportsTable>): ExportRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    kind: row.kind as ExportKind,
    status: row.status === 'completed' ? 'completed' : 'pending',
    rowCount: row.row_count === null ? null : decodeInteger(row.row_count),
    createdAt: decodeInstant(row.created_at),
    finishedAt: decodeNullableInstant(row.finished_at),
  };
}
