/**
 * Signup previews and purges judged by whole-database dumps of a SQLite file, read through a
 * connection of the test's own: a preview changes no row of any table, and a purge only deletes,
 * and only rows of the purged subscription (and its customer), never another subscription's.
 */
import { type BillingEngine, createBillingEngine, createTestGateway, ManualClock, type Storage } from 'billing-engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DatabaseDumper, diffDumps, openDatabaseDumper } from '../http/support/db-dump.js';
import { fileStorage, type TempDir, tempDir } from '../support/sqlite.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

let dir: TempDir;
let storage: Storage;
let engine: BillingEngine;
let dumper: DatabaseDumper;

beforeEach(async () => {
  dir = tempDir('subscription-admin-');
  const file = dir.file('billing.db');
  storage = await fileStorage(file);
  engine = createBillingEngine({
    storage,
    clock: new ManualClock('2026-03-02T10:00:00Z'),
    gateway: createTestGateway(),
  });
  dumper = openDatabaseDumper(file);
});

afterEach(async () => {
  dumper.close();
  await storage.close();
  dir.dispose();
});

let emails = 0;
async function setup() {
  await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 3000,
    interval: 1,
    intervalUnit: 'month',
  });
  const seats = await acme.components.create(family.id, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '9',
  });
  await acme.coupons.create({
    name: 'Ten',
    code: 'TEN',
    percentage: '10',
    recurring: true,
    productFamilyId: family.id,
  });
  await acme.metafields.createFields('subscriptions', { name: 'color' });
  // An endpoint for the signup's events, so a preview that built a webhook would show as a row.
  await acme.webhooks.createEndpoint({
    url: 'https://hooks.example.com/billing',
    webhookSubscriptions: ['signup_success', 'payment_success'],
  });
  const input = () => ({
    productHandle: 'basic',
    customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++emails}@example.com` },
    creditCard: VISA,
    couponCode: 'TEN',
    components: [{ componentId: seats.component.id, allocatedQuantity: 2 }],
    metafields: { color: 'blue' },
  });
  const subscribe = async () => {
    const view = await acme.subscriptions.create(input());
    await acme.notes.create(view.subscription.id, { body: 'A note' });
    await acme.allocations.allocate(view.subscription.id, seats.component.id, { quantity: 4 });
    return acme.subscriptions.get(view.subscription.id);
  };
  return { acme, input, subscribe };
}

describe('signup preview and purge, judged by database dumps', () => {
  it('a signup preview changes no row of any table: no webhook, no event, no attempt', async () => {
    const { acme, input, subscribe } = await setup();
    await subscribe();
    const before = dumper.dump();
    expect(before.tables.webhooks?.rows.length, 'the signup made webhooks').toBeGreaterThan(0);
    const preview = await acme.subscriptions.previewSignup(input());
    expect(preview.currentBillingManifest.totalInCents).toBe(4320); // (3000 + 2 × 900) − 10%
    expect(diffDumps(before, dumper.dump())).toEqual([]);
  });

  it('a purge only deletes, and only rows of the purged subscription and its customer', async () => {
    const { acme, subscribe } = await setup();
    const kept = await subscribe();
    const purged = await subscribe();
    const before = dumper.dump();
    await acme.subscriptions.purge(purged.subscription.id, {
      ack: purged.customer.id,
      cascade: ['customer', 'payment_profile'],
    });
    const after = dumper.dump();
    const changes = diffDumps(before, after);
    // Nothing of the purged subscription is left in any table.
    for (const [table, dump] of Object.entries(after.tables)) {
      const column = dump.columns.indexOf('subscription_id');
      if (column < 0) continue;
      const left = dump.rows.filter((row) => String(row[column]) === String(purged.subscription.id));
      expect(left, `${table} rows of the purged subscription`).toEqual([]);
    }
    expect(changes.length).toBeGreaterThan(10);
    expect(changes.filter((c) => c.change !== 'delete')).toEqual([]);
    const tables = new Set(changes.map((c) => c.table));
    for (const table of [
      'subscriptions',
      'customers',
      'payment_profiles',
      'ledger_transactions',
      'payment_attempts',
      'subscription_components',
      'allocations',
      'notes',
      'metadata',
      'invoices',
      'invoice_events',
      'outbox_events',
      'webhooks',
      'due_work',
    ]) {
      expect(tables, table).toContain(table);
    }
    const keptId = String(kept.subscription.id);
    for (const { table, before: row } of changes) {
      if (table === 'subscriptions') expect(String(row?.id)).toBe(String(purged.subscription.id));
      if (table === 'customers') expect(String(row?.id)).toBe(String(purged.customer.id));
      if (row?.subscription_id !== undefined && row.subscription_id !== null) {
        expect(String(row.subscription_id), `${table} row of another subscription`).toBe(
          String(purged.subscription.id),
        );
      }
      if (row?.customer_id !== undefined && row.customer_id !== null) {
        expect(String(row.customer_id), `${table} row of another customer`).toBe(String(purged.customer.id));
      }
      if (table === 'outbox_events' && row?.subject_type === 'subscription') {
        expect(String(row.subject_id)).not.toBe(keptId);
      }
    }
    expect((await acme.subscriptions.get(kept.subscription.id)).subscription).toEqual(kept.subscription);
  });
});
