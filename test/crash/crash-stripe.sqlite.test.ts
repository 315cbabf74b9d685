/**
 * The crash test once more with the Stripe gateway: every billing process charges through
 * `createStripeGateway` and the real `stripe` client, against a fake Stripe served by the test
 * process, so Stripe's records (PaymentIntents and their idempotency keys) survive each SIGKILL of
 * the billing process as Stripe's would. The kills land just before the fake sees a PaymentIntent
 * and just after it confirmed one, and at random instants. SQLite only: the gateway, not the
 * storage, is what this run adds.
 */
import Database from 'better-sqlite3';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { tempDir } from '../support/sqlite.js';
import { crashSuite } from './crash-suite.js';

const dir = tempDir('billing-crash-stripe-');

crashSuite(
  {
    name: 'sqlite',
    async create(label) {
      const file = dir.file(`${label}.db`);
      return {
        location: { dialect: 'sqlite', file },
        async open() {
          const storage = createSqliteStorage({ database: file });
          await storage.migrate();
          return storage;
        },
        async rows(sql) {
          const db = new Database(file, { readonly: true });
          try {
            return db.prepare(sql).all() as Record<string, unknown>[];
          } finally {
            db.close();
          }
        },
        async dispose() {},
      };
    },
    async close() {
      dir.dispose();
    },
  },
  // Stripe's test cards: one that pays, and one that attaches but declines every charge.
  { subscriptions: 48, cards: { ok: '4242424242424242', declining: '4000000000000341' } },
  { gateway: 'stripe' },
);
