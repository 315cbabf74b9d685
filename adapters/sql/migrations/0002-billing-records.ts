/**
 * Migration 2: the billing slice: catalog (families, products, immutable product versions),
 * customers with payment profiles, subscriptions, the ledger and payment attempts.
 *
 * References between tenant tables are composite, `(site_id, x_id)`, so a row can only point at
 * a row of its own site. They use NO ACTION rather than RESTRICT: deleting a site cascades to
 * parents and children in one statement, and NO ACTION checks only once that statement is done.
 */
import { sql } from 'kysely';
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/** Creates the billing-slice tables. */
export const billingRecordsMigration: Migration = {
  id: 2,
  name: 'billing-records',
  async up(db, dialect) {
    const t = columnTypes(dialect);

    await finishTable(
      createTenantTable(db, dialect, 'product_families')
        .addColumn('name', t.text, (col) => col.notNull())
        .addColumn('handle', t.text, (col) => col.notNull())
        .addColumn('description', t.text)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('product_families_site_id_handle_key', ['site_id', 'handle']),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'products')
        .addColumn('family_id', t.id, (col) => col.notNull())
        .addColumn('handle', t.text, (col) => col.notNull())
        .addColumn('current_version', t.integer, (col) => col.notNull())
        .addColumn('archived_at', t.instant)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('products_site_id_handle_key', ['site_id', 'handle'])
        .addForeignKeyConstraint('products_family_fkey', ['site_id', 'family_id'], 'product_families', [
          'site_id',
          'id',
        ]),
      dialect,
    ).execute();
    await db.schema.createIndex('products_family_idx').on('products').columns(['site_id', 'family_id', 'id']).execute();

    await finishTable(
      db.schema
        .createTable('product_versions')
        .addColumn('site_id', t.id, (col) => col.notNull().references('sites.id').onDelete('cascade'))
        .addColumn('product_id', t.id, (col) => col.notNull())
        .addColumn('version', t.integer, (col) => col.notNull())
        .addColumn('terms', t.json, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addPrimaryKeyConstraint('product_versions_pkey', ['site_id', 'product_id', 'version'])
        .addForeignKeyConstraint('product_versions_product_fkey', ['site_id', 'product_id'], 'products', [
          'site_id',
          'id',
        ]),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'customers')
        .addColumn('first_name', t.text, (col) => col.notNull())
        .addColumn('last_name', t.text, (col) => col.notNull())
        .addColumn('email', t.text, (col) => col.notNull())
        .addColumn('reference', t.text)
        .addColumn('organization', t.text)
        .addColumn('phone', t.text)
        .addColumn('address', t.text)
        .addColumn('address2', t.text)
        .addColumn('city', t.text)
        .addColumn('state', t.text)
        .addColumn('zip', t.text)
        .addColumn('country', t.text)
        .addColumn('version', t.integer, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        // NULLs are distinct in a unique index on both dialects, so customers without a reference never collide.
        .addUniqueConstraint('customers_site_id_reference_key', ['site_id', 'reference']),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'payment_profiles')
        .addColumn('customer_id', t.id, (col) => col.notNull())
        .addColumn('payment_type', t.text, (col) => col.notNull())
        .addColumn('vault_token', t.text, (col) => col.notNull())
        .addColumn('customer_vault_token', t.text)
        .addColumn('current_vault', t.text, (col) => col.notNull())
        .addColumn('card_type', t.text, (col) => col.notNull())
        .addColumn('last_four', t.text, (col) => col.notNull())
        .addColumn('expiration_month', t.integer, (col) => col.notNull())
        .addColumn('expiration_year', t.integer, (col) => col.notNull())
        .addColumn('first_name', t.text)
        .addColumn('last_name', t.text)
        .addColumn('billing_address', t.text)
        .addColumn('billing_address2', t.text)
        .addColumn('billing_city', t.text)
        .addColumn('billing_state', t.text)
        .addColumn('billing_zip', t.text)
        .addColumn('billing_country', t.text)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        // A customer's deletion takes its payment profiles with it (port contract).
        .addForeignKeyConstraint(
          'payment_profiles_customer_fkey',
          ['site_id', 'customer_id'],
          'customers',
          ['site_id', 'id'],
          (fk) => fk.onDelete('cascade'),
        ),
      dialect,
    ).execute();
    await db.schema
      .createIndex('payment_profiles_customer_idx')
      .on('payment_profiles')
      .columns(['site_id', 'customer_id'])
      .execute();

    await finishTable(
      createTenantTable(db, dialect, 'subscriptions')
        .addColumn('customer_id', t.id, (col) => col.notNull())
        .addColumn('product_id', t.id, (col) => col.notNull())
        .addColumn('product_version', t.integer, (col) => col.notNull())
        .addColumn('payment_profile_id', t.id)
        .addColumn('state', t.text, (col) => col.notNull())
        .addColumn('period_anchor_at', t.instant, (col) => col.notNull())
        .addColumn('period_index', t.integer, (col) => col.notNull())
        .addColumn('current_period_started_at', t.instant, (col) => col.notNull())
        .addColumn('current_period_ends_at', t.instant, (col) => col.notNull())
        .addColumn('next_assessment_at', t.instant)
        .addColumn('trial_started_at', t.instant)
        .addColumn('trial_ended_at', t.instant)
        .addColumn('activated_at', t.instant)
        .addColumn('canceled_at', t.instant)
        .addColumn('expires_at', t.instant)
        .addColumn('delayed_cancel_at', t.instant)
        .addColumn('cancel_at_end_of_period', t.boolean, (col) => col.notNull())
        .addColumn('cancellation_message', t.text)
        .addColumn('cancellation_method', t.text)
        .addColumn('signup_payment_id', t.id)
        .addColumn('signup_revenue_in_cents', t.money, (col) => col.notNull())
        .addColumn('coupon_codes', t.json, (col) => col.notNull())
        .addColumn('referral_code', t.text)
        .addColumn('data', t.json, (col) => col.notNull())
        .addColumn('version', t.integer, (col) => col.notNull())
        // The ledger's running balance: appending a line updates it, which also locks the row, so
        // concurrent appends to one subscription queue up and their balances chain.
        .addColumn('balance_in_cents', t.money, (col) => col.notNull().defaultTo(0))
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('subscriptions_site_id_referral_code_key', ['site_id', 'referral_code'])
        .addForeignKeyConstraint('subscriptions_customer_fkey', ['site_id', 'customer_id'], 'customers', [
          'site_id',
          'id',
        ])
        .addForeignKeyConstraint(
          'subscriptions_product_version_fkey',
          ['site_id', 'product_id', 'product_version'],
          'product_versions',
          ['site_id', 'product_id', 'version'],
        )
        // MATCH SIMPLE: a null payment_profile_id is not checked.
        .addForeignKeyConstraint(
          'subscriptions_payment_profile_fkey',
          ['site_id', 'payment_profile_id'],
          'payment_profiles',
          ['site_id', 'id'],
        ),
      dialect,
    ).execute();
    await db.schema
      .createIndex('subscriptions_customer_idx')
      .on('subscriptions')
      .columns(['site_id', 'customer_id', 'id'])
      .execute();
    await db.schema
      .createIndex('subscriptions_product_idx')
      .on('subscriptions')
      .columns(['site_id', 'product_id', 'id'])
      .execute();

    await finishTable(
      createTenantTable(db, dialect, 'ledger_transactions')
        .addColumn('subscription_id', t.id, (col) => col.notNull())
        .addColumn('customer_id', t.id, (col) => col.notNull())
        .addColumn('type', t.text, (col) => col.notNull())
        .addColumn('kind', t.text)
        .addColumn('amount_in_cents', t.money, (col) => col.notNull())
        .addColumn('memo', t.text, (col) => col.notNull())
        .addColumn('success', t.boolean)
        .addColumn('starting_balance_in_cents', t.money, (col) => col.notNull())
        .addColumn('ending_balance_in_cents', t.money, (col) => col.notNull())
        .addColumn('payment_id', t.id)
        .addColumn('product_id', t.id)
        .addColumn('component_id', t.id)
        .addColumn('period_index', t.integer)
        .addColumn('gateway_transaction_id', t.text)
        .addColumn('refunded_amount_in_cents', t.money, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addForeignKeyConstraint(
          'ledger_transactions_subscription_fkey',
          ['site_id', 'subscription_id'],
          'subscriptions',
          ['site_id', 'id'],
        )
        .addCheckConstraint(
          'ledger_transactions_type_check',
          sql`type in ('charge', 'credit', 'adjustment', 'payment', 'refund', 'info')`,
        ),
      dialect,
    ).execute();
    await db.schema
      .createIndex('ledger_transactions_subscription_idx')
      .on('ledger_transactions')
      .columns(['site_id', 'subscription_id', 'id'])
      .execute();

    await finishTable(
      createTenantTable(db, dialect, 'payment_attempts')
        .addColumn('subscription_id', t.id)
        .addColumn('customer_id', t.id)
        .addColumn('idempotency_key', t.text, (col) => col.notNull())
        .addColumn('amount_in_cents', t.money, (col) => col.notNull())
        .addColumn('currency', t.text, (col) => col.notNull())
        .addColumn('purpose', t.text, (col) => col.notNull())
        .addColumn('status', t.text, (col) => col.notNull())
        .addColumn('gateway_transaction_id', t.text)
        .addColumn('message', t.text)
        .addColumn('transaction_id', t.id)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        // The deterministic key is what makes a payment reconcilable instead of charged twice.
        .addUniqueConstraint('payment_attempts_site_id_idempotency_key_key', ['site_id', 'idempotency_key'])
        .addCheckConstraint(
          'payment_attempts_status_check',
          sql`status in ('pending', 'succeeded', 'declined', 'failed', 'unknown')`,
        ),
      dialect,
    ).execute();
    await db.schema
      .createIndex('payment_attempts_unresolved_idx')
      .on('payment_attempts')
      .columns(['created_at', 'id'])
      .where(sql<boolean>`status in ('pending', 'unknown')`)
      .execute();
  },
};
