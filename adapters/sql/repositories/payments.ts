/** Payment attempts on SQL, unique per `(site_id, idempotency_key)`. */
import {
  BillingError,
  type PaymentAttemptRecord,
  type PaymentAttemptStatus,
  type PaymentAttemptsRepository,
} from 'billing-engine';
import type { Selectable, Updateable } from 'kysely';
import { decodeId, decodeInstant, decodeMoney, encodeMoney } from '../codecs.js';
import { compiledOnce } from '../compiled-once.js';
import type { PaymentAttemptsTable } from '../schema.js';
import type { RepositoryContext } from './repository-context.js';

const STATUSES: ReadonlySet<string> = new Set<PaymentAttemptStatus>([
  'pending',
  'succeeded',
  'declined',
  'failed',
  'unknown',
]);

/** A renewal's attempt lookup (twice per renewal), compiled once (see `compiled-once.ts`). */
const attemptByKey = compiledOnce((db, siteId: number, idempotencyKey: string) =>
  db
    .selectFrom('payment_attempts')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('idempotency_key', '=', idempotencyKey),
);

/** Builds the payment-attempts repository of one transaction. */
export function createPaymentAttemptsRepository(context: RepositoryContext): PaymentAttemptsRepository {
  const { db, encode } = context;
  return {
    async insert(attempt) {
      const row = await db
        .insertInto('payment_attempts')
        .values({
          site_id: attempt.siteId,
          subscription_id: attempt.subscriptionId,
          customer_id: attempt.customerId,
          idempotency_key: attempt.idempotencyKey,
          amount_in_cents: encodeMoney(attempt.amountInCents),
          currency: attempt.currency,
          purpose: attempt.purpose,
          status: attempt.status,
          gateway_transaction_id: attempt.gatewayTransactionId,
          message: attempt.message,
          transaction_id: attempt.transactionId,
          created_at: encode.instant(attempt.createdAt),
          updated_at: encode.instant(attempt.updatedAt),
        })
        // A second attempt with one key is refused without failing the statement: the caller
        // (crash recovery) may want to look the first attempt up in the same transaction.
        .onConflict((oc) => oc.columns(['site_id', 'idempotency_key']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) {
        throw new BillingError('conflict', `Payment idempotency key ${attempt.idempotencyKey} is already taken.`, {
          data: { idempotencyKey: attempt.idempotencyKey },
        });
      }
      return decodeAttempt(row);
    },

    async findByKey(siteId, idempotencyKey) {
      const [row] = (await attemptByKey.run(context, siteId, idempotencyKey)).rows;
      return row && decodeAttempt(row);
    },

    async update(siteId, id, patch) {
      const set: Updateable<PaymentAttemptsTable> = {};
      if (patch.status !== undefined) set.status = patch.status;
      if (patch.gatewayTransactionId !== undefined) set.gateway_transaction_id = patch.gatewayTransactionId;
      if (patch.message !== undefined) set.message = patch.message;
      if (patch.transactionId !== undefined) set.transaction_id = patch.transactionId;
      if (patch.updatedAt !== undefined) set.updated_at = encode.instant(patch.updatedAt);
      const row =
        Object.keys(set).length === 0
          ? await db
              .selectFrom('payment_attempts')
              .selectAll()
              .where('site_id', '=', siteId)
              .where('id', '=', id)
              .executeTakeFirst()
          : await db
              .updateTable('payment_attempts')
              .set(set)
              .where('site_id', '=', siteId)
              .where('id', '=', id)
              .returningAll()
              .executeTakeFirst();
      return row && decodeAttempt(row);
    },

    async listUnresolved(before, limit) {
      if (limit <= 0) return [];
      // Across sites: the reconciler is a worker, like the claimer of due work.
      const rows = await db
        .selectFrom('payment_attempts')
        .selectAll()
        .where('status', 'in', ['pending', 'unknown'])
        .where('created_at', '<', encode.instant(before))
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(decodeAttempt);
    },
  };
}

function decodeAttempt(row: Selectable<PaymentAttemptsTable>): PaymentAttemptRecord {
  if (!STATUSES.has(row.status)) throw new BillingError('storage', `Unknown payment attempt status ${row.status}.`);
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    subscriptionId: row.subscription_id === null ? null : decodeId(row.subscription_id),
    customerId: row.customer_id === null ? null : decodeId(row.customer_id),
    idempotencyKey: row.idempotency_key,
    amountInCents: decodeMoney(row.amount_in_cents),
    currency: row.currency,
    purpose: row.purpose,
    status: row.status as PaymentAttemptStatus,
    gatewayTransactionId: row.gateway_transaction_id,
    message: row.message,
    transactionId: row.transaction_id === null ? null : decodeId(row.transaction_id),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}
