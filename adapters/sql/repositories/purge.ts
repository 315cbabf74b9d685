/** Purging one subscription on SQL. */
import { type PurgeRepository, type PurgeSummary, SUBSCRIPTION_WORK_KINDS } from 'billing-engine';
import { type ExpressionBuilder, sql } from 'kysely';
import { decodeId } from '../codecs.js';
import type { Database } from '../schema.js';
import { purgeMrrMovementRows } from './mrr-movements.js';
import { createPaymentAttemptsRepository } from './payments.js';
import { purgeProformaRows } from './proforma-invoices.js';
import type { RepositoryContext } from './repository-context.js';

const OPEN_STATUSES = ['pending', 'unknown'];

/**
 * Due work whose subject is not what makes it the subscription's is found by its key (see
 * `PurgeSummary.dueWork`): a prepaid replenishment check is keyed
 * `prepaid_replenishment:<subscription id>:...`, a mail job `mail:<kind>:<subject id>:...`.
 */
const replenishmentKeyPrefix = (subscriptionId: number) => `prepaid_replenishment:${subscriptionId}:`;
const mailKeyPrefix = (mail: 'invoice' | 'payment_update_request' | 'portal_invitation') => `mail:${mail}:`;

/** Whether a due-work row's key starts with `prefix` (compared exactly: no `like` wildcards). */
function keyStartsWith(eb: ExpressionBuilder<Database, 'due_work'>, prefix: string) {
  return eb(sql<string>`substr(${sql.ref('unique_key')}, 1, ${sql.lit(prefix.length)})`, '=', prefix);
}

/** Rows a delete statement removed, as a number. */
function removed(result: { numDeletedRows: bigint }): number {
  return Number(result.numDeletedRows);
}

/**
 * Builds the purge repository of one transaction. The rows to remove are named by subqueries
 * (never by lists of ids read first), so a subscription with any number of lines needs a fixed
 * number of statements and no statement outgrows a driver's parameter limit. Children go before
 * their parents: the references between tenant tables do not cascade.
 */
/** Tables whose rows belong to one subscription through their `subscription_id`. */
type SubscriptionOwnedTable =
  | 'credit_notes'
  | 'invoices'
  | 'account_entries'
  | 'usages'
  | 'allocations'
  | 'subscription_components'
  | 'notes'
  | 'ledger_transactions';

export function createPurgeRepository(ctx: RepositoryContext): PurgeRepository {
  const { db } = ctx;
  return {
    async openPaymentAttempts(siteId, subscriptionId, customerId) {
      const rows = await db
        .selectFrom('payment_attempts')
        .select('idempotency_key')
        .where('site_id', '=', siteId)
        .where('status', 'in', OPEN_STATUSES)
        .where((eb) =>
          customerId === null
            ? eb('subscription_id', '=', subscriptionId)
            : eb.or([
                eb('subscription_id', '=', subscriptionId),
                eb.and([eb('subscription_id', 'is', null), eb('customer_id', '=', customerId)]),
              ]),
        )
        .orderBy('id')
        .execute();
      // Read back through the payments repository, so the record is decoded in one place.
      const payments = createPaymentAttemptsRepository(ctx);
      const out = [];
      for (const row of rows) {
        const attempt = await payments.findByKey(siteId, row.idempotency_key);
        if (attempt !== undefined) out.push(attempt);
      }
      return out;
    },

    async purgeSubscription(siteId, subscriptionId, options) {
      // Rows other repositories cache for the transaction (a payment profile) go here too.
      ctx.caches.clearAll();
      const subscription = await db
        .selectFrom('subscriptions')
        .select(['customer_id'])
        .where('site_id', '=', siteId)
        .where('id', '=', subscriptionId)
        .executeTakeFirst();
      if (subscription === undefined) return undefined;
      const customerId = decodeId(subscription.customer_id);
      const others = await db
        .selectFrom('subscriptions')
        .select('id')
        .where('site_id', '=', siteId)
        .where('customer_id', '=', customerId)
        .where('id', '<>', subscriptionId)
        .limit(1)
        .executeTakeFirst();
      const removeCustomer = options.customer && others === undefined;

      const lineIds = db
        .selectFrom('ledger_transactions')
        .select('id')
        .where('site_id', '=', siteId)
        .where('subscription_id', '=', subscriptionId);
      // The subscription's attempts: made for it, or (a signup's) paid into one of its lines; with
      // the customer, also the customer's attempts of no subscription.
      const attemptIds = db
        .selectFrom('payment_attempts')
        .select('id')
        .where('site_id', '=', siteId)
        .where((eb) =>
          eb.or([
            eb('subscription_id', '=', subscriptionId),
            eb('transaction_id', 'in', lineIds),
            ...(removeCustomer
              ? [eb.and([eb('subscription_id', 'is', null), eb('customer_id', '=', customerId)])]
              : []),
          ]),
        );
      const invoiceIds = db
        .selectFrom('invoices')
        .select('id')
        .where('site_id', '=', siteId)
        .where('subscription_id', '=', subscriptionId);
      const invoiceUids = db
        .selectFrom('invoices')
        .select('uid')
        .where('site_id', '=', siteId)
        .where('subscription_id', '=', subscriptionId);
      const creditNoteIds = db
        .selectFrom('credit_notes')
        .select('id')
        .where('site_id', '=', siteId)
        .where('subscription_id', '=', subscriptionId);
      const eventIds = db
        .selectFrom('outbox_events')
        .select('id')
        .where('site_id', '=', siteId)
        .where((eb) =>
          eb.or([
            eb.and([eb('subject_type', '=', 'subscription'), eb('subject_id', '=', subscriptionId)]),
            eb.and([eb('subject_type', '=', 'payment_attempt'), eb('subject_id', 'in', attemptIds)]),
            eb.and([eb('subject_type', '=', 'invoice'), eb('subject_id', 'in', invoiceIds)]),
            eb.and([eb('subject_type', '=', 'credit_note'), eb('subject_id', 'in', creditNoteIds)]),
            ...(removeCustomer
              ? [eb.and([eb('subject_type', '=', 'customer'), eb('subject_id', '=', customerId)])]
              : []),
          ]),
        );
      const webhookIds = db
        .selectFrom('webhooks')
        .select('id')
        .where('site_id', '=', siteId)
        .where('event_id', 'in', eventIds);

      /** Deletes the subscription's rows of a table that names it in `subscription_id`; how many. */
      const deleteOwnRows = async (table: SubscriptionOwnedTable) =>
        removed(
          await db
            .deleteFrom(table)
            .where('site_id', '=', siteId)
            .where('subscription_id', '=', subscriptionId)
            .executeTakeFirst(),
        );

      // Due work and webhooks first: they are found through the events and attempts below. Rows
      // whose subject is not theirs are found by their key: a prepaid replenishment check (subject
      // 0) and mail jobs (whose subject may be an invoice or the customer; the key names the mail).
      const dueWork = removed(
        await db
          .deleteFrom('due_work')
          .where('site_id', '=', siteId)
          .where((eb) =>
            eb.or([
              eb.and([eb('kind', 'in', [...SUBSCRIPTION_WORK_KINDS]), eb('subject_id', '=', subscriptionId)]),
              eb.and([eb('kind', '=', 'reconcile_payment'), eb('subject_id', 'in', attemptIds)]),
              eb.and([eb('kind', '=', 'reconcile_payment'), keyStartsWith(eb, replenishmentKeyPrefix(subscriptionId))]),
              eb.and([eb('kind', '=', 'webhook_delivery'), eb('subject_id', 'in', webhookIds)]),
              eb.and([
                eb('kind', '=', 'mail_delivery'),
                eb('subject_id', '=', subscriptionId),
                keyStartsWith(eb, mailKeyPrefix('payment_update_request')),
              ]),
              eb.and([
                eb('kind', '=', 'mail_delivery'),
                eb('subject_id', 'in', invoiceIds),
                keyStartsWith(eb, mailKeyPrefix('invoice')),
              ]),
              ...(removeCustomer
                ? [
                    eb.and([
                      eb('kind', '=', 'mail_delivery'),
                      eb('subject_id', '=', customerId),
                      keyStartsWith(eb, mailKeyPrefix('portal_invitation')),
                    ]),
                  ]
                : []),
            ]),
          )
          .executeTakeFirst(),
      );
      const webhooks = removed(
        await db
          .deleteFrom('webhooks')
          .where('site_id', '=', siteId)
          .where('event_id', 'in', eventIds)
          .executeTakeFirst(),
      );
      const events = removed(
        await db
          .deleteFrom('outbox_events')
          .where('site_id', '=', siteId)
          .where('id', 'in', eventIds)
          .executeTakeFirst(),
      );
      const invoiceEvents = removed(
        await db
          .deleteFrom('invoice_events')
          .where('site_id', '=', siteId)
          .where('invoice_uid', 'in', invoiceUids)
          .executeTakeFirst(),
      );
      const creditNotes = await deleteOwnRows('credit_notes');
      const invoices = await deleteOwnRows('invoices');
      const accountEntries = await deleteOwnRows('account_entries');
      await purgeProformaRows(db, siteId, subscriptionId, removeCustomer ? customerId : null);
      await purgeMrrMovementRows(db, siteId, subscriptionId);
      const usages = await deleteOwnRows('usages');
      const allocations = await deleteOwnRows('allocations');
      const subscriptionComponents = await deleteOwnRows('subscription_components');
      const notes = await deleteOwnRows('notes');
      const metadata = removed(
        await db
          .deleteFrom('metadata')
          .where('site_id', '=', siteId)
          .where((eb) =>
            eb.or([
              eb.and([eb('resource_type', '=', 'subscription'), eb('resource_id', '=', subscriptionId)]),
              ...(removeCustomer
                ? [eb.and([eb('resource_type', '=', 'customer'), eb('resource_id', '=', customerId)])]
                : []),
            ]),
          )
          .executeTakeFirst(),
      );
      // Attempts before the lines they name are gone from under the subquery.
      const paymentAttempts = removed(
        await db
          .deleteFrom('payment_attempts')
          .where('site_id', '=', siteId)
          .where('id', 'in', attemptIds)
          .executeTakeFirst(),
      );
      const ledgerLines = await deleteOwnRows('ledger_transactions');
      const subscriptions = removed(
        await db
          .deleteFrom('subscriptions')
          .where('site_id', '=', siteId)
          .where('id', '=', subscriptionId)
          .executeTakeFirst(),
      );
      // Its custom price points and their terms (product versions no other subscription can be
      // on), after the subscription that was pinned to one of them.
      const customPricePointIds = db
        .selectFrom('product_price_points')
        .select('id')
        .where('site_id', '=', siteId)
        .where('type', '=', 'custom')
        .where('subscription_id', '=', subscriptionId);
      await db
        .deleteFrom('product_versions')
        .where('site_id', '=', siteId)
        .where('price_point_id', 'in', customPricePointIds)
        .execute();
      const customPricePoints = removed(
        await db
          .deleteFrom('product_price_points')
          .where('site_id', '=', siteId)
          .where('type', '=', 'custom')
          .where('subscription_id', '=', subscriptionId)
          .executeTakeFirst(),
      );

      let paymentProfiles = 0;
      if (removeCustomer || options.paymentProfiles) {
        const inUse = db
          .selectFrom('subscriptions')
          .select('payment_profile_id')
          .where('site_id', '=', siteId)
          .where('payment_profile_id', 'is not', null);
        let statement = db
          .deleteFrom('payment_profiles')
          .where('site_id', '=', siteId)
          .where('customer_id', '=', customerId);
        // Without the customer, a profile another subscription pays with stays.
        if (!removeCustomer) statement = statement.where('id', 'not in', inUse);
        paymentProfiles = removed(await statement.executeTakeFirst());
      }
      if (removeCustomer) {
        await db.deleteFrom('customers').where('site_id', '=', siteId).where('id', '=', customerId).execute();
      }

      const summary: PurgeSummary = {
        subscriptions,
        ledgerLines,
        paymentAttempts,
        subscriptionComponents,
        allocations,
        usages,
        notes,
        metadata,
        invoices,
        creditNotes,
        invoiceEvents,
        accountEntries,
        dueWork,
        events,
        webhooks,
        paymentProfiles,
        customPricePoints,
        customerRemoved: removeCustomer,
      };
      return summary;
    },
  };
}
