/** Whole-site data operations on SQL. */
import type { SiteDataRepository } from 'billing-engine';
import { decodeInteger } from '../codecs.js';
import { clearAccountData } from './accounts.js';
import { clearMrrMovementData } from './mrr-movements.js';
import { clearProformaData } from './proforma-invoices.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the site-data repository of one transaction. */
export function createSiteDataRepository({ db, caches }: RepositoryContext): SiteDataRepository {
  return {
    async counts(siteId) {
      const [customers, subscriptions, transactions] = await Promise.all([
        db
          .selectFrom('customers')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('site_id', '=', siteId)
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('subscriptions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('site_id', '=', siteId)
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('ledger_transactions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('site_id', '=', siteId)
          .executeTakeFirstOrThrow(),
      ]);
      return {
        customers: decodeInteger(customers.n),
        subscriptions: decodeInteger(subscriptions.n),
        transactions: decodeInteger(transactions.n),
      };
    },

    async clear(siteId, _scope) {
      // Rows other repositories cache for the transaction (a payment profile) go here too.
      caches.clearAll();
      // Both scopes remove the same tables today (as in the memory adapter): `all` will also cover
      // records that belong to no customer once such tables exist. Both remove every subscription,
      // so both remove the custom price points (catalog rows owned by a subscription) below.
      // Children go before parents because the references between tenant tables do not cascade.
      // Documents go with the billing they show; the numbering series (`document_sequences`)
      // stays, so that a number is never issued twice on the site.
      await clearAccountData(db, siteId);
      await clearProformaData(db, siteId);
      await clearMrrMovementData(db, siteId);
      await db.deleteFrom('invoice_events').where('site_id', '=', siteId).execute();
      await db.deleteFrom('credit_notes').where('site_id', '=', siteId).execute();
      await db.deleteFrom('invoices').where('site_id', '=', siteId).execute();
      await db.deleteFrom('webhooks').where('site_id', '=', siteId).execute();
      await db.deleteFrom('direct_calls').where('site_id', '=', siteId).execute();
      await db.deleteFrom('usages').where('site_id', '=', siteId).execute();
      await db.deleteFrom('allocations').where('site_id', '=', siteId).execute();
      await db.deleteFrom('subscription_components').where('site_id', '=', siteId).execute();
      await db.deleteFrom('notes').where('site_id', '=', siteId).execute();
      await db.deleteFrom('metadata').where('site_id', '=', siteId).execute();
      await db.deleteFrom('ledger_transactions').where('site_id', '=', siteId).execute();
      await db.deleteFrom('payment_attempts').where('site_id', '=', siteId).execute();
      await db.deleteFrom('subscriptions').where('site_id', '=', siteId).execute();
      // Every subscription is gone, so every custom price point is too (each belongs to one
      // subscription, as a purge removes them), with the product versions holding their terms:
      // catalog rows nothing could reach any more. Catalog price points and versions stay.
      await db
        .deleteFrom('product_versions')
        .where('site_id', '=', siteId)
        .where('price_point_id', 'in', (eb) =>
          eb.selectFrom('product_price_points').select('id').where('site_id', '=', siteId).where('type', '=', 'custom'),
        )
        .execute();
      await db.deleteFrom('product_price_points').where('site_id', '=', siteId).where('type', '=', 'custom').execute();
      await db.deleteFrom('payment_profiles').where('site_id', '=', siteId).execute();
      await db.deleteFrom('customers').where('site_id', '=', siteId).execute();
      await db.deleteFrom('outbox_events').where('site_id', '=', siteId).execute();
      // All of it, webhook deliveries included: they are about the records just removed, as are the
      // prepaid replenishment checks and mail jobs a purge finds by their key.
      await db.deleteFrom('due_work').where('site_id', '=', siteId).execute();
    },
  };
}
