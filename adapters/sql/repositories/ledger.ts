/**
 * The ledger on SQL. Each subscription row carries the running balance; an append adds the
 * lines' deltas to it in one UPDATE, which also takes the row lock, so concurrent appends to one
 * subscription queue behind each other and every line starts where the previous one ended.
 */
import {
  BillingError,
  balanceOutOfRange,
  type LedgerRepository,
  type TransactionRecord,
  type TransactionType,
} from 'billing-engine';
import { type Insertable, type Selectable, sql } from 'kysely';
import { decodeBoolean, decodeId, decodeInstant, decodeInteger, decodeMoney, encodeMoney } from '../codecs.js';
import { compiledOnce } from '../compiled-once.js';
import type { LedgerTransactionsTable } from '../schema.js';
import type { RepositoryContext } from './repository-context.js';

const TYPES: ReadonlySet<string> = new Set<TransactionType>([
  'charge',
  'credit',
  'adjustment',
  'payment',
  'refund',
  'info',
]);

/** A subscription's balance moved by `delta`, compiled once (see `compiled-once.ts`): twice per renewal. */
const addToBalance = compiledOnce((db, delta: number, siteId: number, subscriptionId: number) =>
  db
    .updateTable('subscriptions')
    .set({ balance_in_cents: sql<number>`balance_in_cents + ${delta}` })
    .where('site_id', '=', siteId)
    .where('id', '=', subscriptionId)
    // A balance beyond a safe integer could never be read back exactly: refused here, in the
    // database's own arithmetic, before anything is written.
    .where(sql<number>`abs(balance_in_cents + ${delta})`, '<=', Number.MAX_SAFE_INTEGER)
    .returning('balance_in_cents'),
);

/** The columns of a ledger line, in the order {@link insertLine} takes them. */
const LINE_COLUMNS = [
  'site_id',
  'subscription_id',
  'customer_id',
  'type',
  'kind',
  'amount_in_cents',
  'memo',
  'success',
  'starting_balance_in_cents',
  'ending_balance_in_cents',
  'payment_id',
  'product_id',
  'component_id',
  'period_index',
  'gateway_transaction_id',
  'refunded_amount_in_cents',
  'created_at',
] as const;

type LineValues = { [K in (typeof LINE_COLUMNS)[number]]: Insertable<LedgerTransactionsTable>[K] };

function lineArguments(values: LineValues): unknown[] {
  return LINE_COLUMNS.map((column) => values[column]);
}

/** One ledger line inserted, compiled once (see `compiled-once.ts`): most appends are of one line. */
const insertLine = compiledOnce(
  (db, ...columns: unknown[]) =>
    db
      .insertInto('ledger_transactions')
      .values(Object.fromEntries(LINE_COLUMNS.map((column, k) => [column, columns[k]])) as unknown as LineValues)
      .returningAll(),
  LINE_COLUMNS.length,
);

/** Builds the ledger repository of one transaction. */
export function createLedgerRepository(context: RepositoryContext): LedgerRepository {
  const { db, encode } = context;
  return {
    async append(lines) {
      if (lines.length === 0) return [];
      // One balance update per subscription, in id order so that two appends touching the same
      // subscriptions cannot deadlock; the lines then chain from the balance before the update.
      const totals = new Map<string, { siteId: number; subscriptionId: number; delta: number }>();
      for (const line of lines) {
        const key = `${line.siteId}:${line.subscriptionId}`;
        const total = totals.get(key) ?? { siteId: line.siteId, subscriptionId: line.subscriptionId, delta: 0 };
        total.delta = total.delta + encodeMoney(line.balanceDeltaInCents);
        if (!Number.isSafeInteger(total.delta)) throw balanceOutOfRange(line.subscriptionId);
        totals.set(key, total);
      }
      const running = new Map<string, number>();
      const ordered = [...totals.entries()].sort(
        ([, a], [, b]) => a.siteId - b.siteId || a.subscriptionId - b.subscriptionId,
      );
      for (const [key, total] of ordered) {
        const [row] = (await addToBalance.run(context, total.delta, total.siteId, total.subscriptionId)).rows;
        if (row === undefined) {
          const exists = await db
            .selectFrom('subscriptions')
            .select('id')
            .where('site_id', '=', total.siteId)
            .where('id', '=', total.subscriptionId)
            .executeTakeFirst();
          if (exists !== undefined) throw balanceOutOfRange(total.subscriptionId);
          throw new BillingError('not_found', `Subscription ${total.subscriptionId} not found.`, {
            data: { what: 'subscription', id: total.subscriptionId },
          });
        }
        running.set(key, decodeMoney(row.balance_in_cents) - total.delta);
      }
      const values = lines.map(({ balanceDeltaInCents, ...line }) => {
        const key = `${line.siteId}:${line.subscriptionId}`;
        const starting = running.get(key) ?? 0;
        const ending = starting + balanceDeltaInCents;
        if (!Number.isSafeInteger(ending)) throw balanceOutOfRange(line.subscriptionId);
        running.set(key, ending);
        return {
          site_id: line.siteId,
          subscription_id: line.subscriptionId,
          customer_id: line.customerId,
          type: line.type,
          kind: line.kind,
          amount_in_cents: encodeMoney(line.amountInCents),
          memo: line.memo,
          success: line.success === null ? null : encode.boolean(line.success),
          starting_balance_in_cents: encodeMoney(starting),
          ending_balance_in_cents: ending,
          payment_id: line.paymentId,
          product_id: line.productId,
          component_id: line.componentId,
          period_index: line.periodIndex,
          gateway_transaction_id: line.gatewayTransactionId,
          refunded_amount_in_cents: 0,
          created_at: encode.instant(line.createdAt),
        };
      });
      // One line with every column given (the builder would leave an undefined one to its default).
      const single = values.length === 1 ? lineArguments(values[0]!) : undefined;
      const rows =
        single !== undefined && !single.includes(undefined)
          ? (await insertLine.run(context, ...single)).rows
          : await db.insertInto('ledger_transactions').values(values).returningAll().execute();
      // A multi-row VALUES list takes its ids in list order; RETURNING has no defined order.
      return rows.map(decodeLine).sort((a, b) => a.id - b.id);
    },

    async balance(siteId, subscriptionId) {
      const row = await db
        .selectFrom('subscriptions')
        .select('balance_in_cents')
        .where('site_id', '=', siteId)
        .where('id', '=', subscriptionId)
        .executeTakeFirst();
      return row === undefined ? 0 : decodeMoney(row.balance_in_cents);
    },

    async listForSubscription(siteId, subscriptionId) {
      const rows = await db
        .selectFrom('ledger_transactions')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('subscription_id', '=', subscriptionId)
        .orderBy('id')
        .execute();
      return rows.map(decodeLine);
    },

    async list(siteId, filter, page) {
      const { types, kinds } = filter;
      if ((types !== undefined && types.length === 0) || (kinds !== undefined && kinds.length === 0)) return [];
      const direction = filter.direction === 'desc' ? 'desc' : 'asc';
      const rows = await db
        .selectFrom('ledger_transactions')
        .selectAll()
        .where('site_id', '=', siteId)
        .$if(filter.subscriptionId !== undefined, (qb) =>
          qb.where('subscription_id', '=', filter.subscriptionId as number),
        )
        .$if(types !== undefined, (qb) => qb.where('type', 'in', types as readonly TransactionType[]))
        .$if(kinds !== undefined, (qb) => qb.where('kind', 'in', kinds as readonly string[]))
        .$if(filter.sinceId !== undefined, (qb) => qb.where('id', '>=', filter.sinceId as number))
        .$if(filter.maxId !== undefined, (qb) => qb.where('id', '<=', filter.maxId as number))
        .$if(filter.since !== undefined, (qb) => qb.where('created_at', '>=', encode.instant(filter.since as Date)))
        .$if(filter.until !== undefined, (qb) => qb.where('created_at', '<=', encode.instant(filter.until as Date)))
        .$if(filter.orderBy === 'created_at', (qb) => qb.orderBy('created_at', direction))
        .orderBy('id', direction)
        .limit(Math.max(0, page.perPage))
        .offset(Math.max(0, (page.page - 1) * page.perPage))
        .execute();
      return rows.map(decodeLine);
    },

    async addRefunded(siteId, paymentId, amountInCents) {
      const amount = encodeMoney(amountInCents);
      // The range is checked in the UPDATE itself: concurrent refunds queue on the row lock and
      // each re-checks against the total the previous one committed, so the payment is never
      // over-refunded, and a release (negative amount) never takes the total below zero.
      const row = await db
        .updateTable('ledger_transactions')
        .set({ refunded_amount_in_cents: sql<number>`refunded_amount_in_cents + ${amount}` })
        .where('site_id', '=', siteId)
        .where('id', '=', paymentId)
        .where('type', '=', 'payment')
        .where(sql<boolean>`refunded_amount_in_cents + ${amount} between 0 and amount_in_cents`)
        .returningAll()
        .executeTakeFirst();
      return row && decodeLine(row);
    },

    async findById(siteId, id) {
      const row = await db
        .selectFrom('ledger_transactions')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && decodeLine(row);
    },
  };
}

function decodeLine(row: Selectable<LedgerTransactionsTable>): TransactionRecord {
  if (!TYPES.has(row.type)) throw new BillingError('storage', `Unknown ledger transaction type ${row.type}.`);
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    subscriptionId: decodeId(row.subscription_id),
    customerId: decodeId(row.customer_id),
    type: row.type as TransactionType,
    kind: row.kind,
    amountInCents: decodeMoney(row.amount_in_cents),
    memo: row.memo,
    success: row.success === null ? null : decodeBoolean(row.success),
    startingBalanceInCents: decodeMoney(row.starting_balance_in_cents),
    endingBalanceInCents: decodeMoney(row.ending_balance_in_cents),
    paymentId: row.payment_id === null ? null : decodeId(row.payment_id),
    productId: row.product_id === null ? null : decodeId(row.product_id),
    componentId: row.component_id === null ? null : decodeId(row.component_id),
    periodIndex: row.period_index === null ? null : decodeInteger(row.period_index),
    gatewayTransactionId: row.gateway_transaction_id,
    refundedAmountInCents: decodeMoney(row.refunded_amount_in_cents),
    createdAt: decodeInstant(row.created_at),
  };
}
