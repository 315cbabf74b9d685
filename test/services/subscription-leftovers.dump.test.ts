/**
 * A purge of a subscription with custom prices, judged by whole-database dumps of a SQLite file
 * read through a connection of the test's own: it only deletes; no row naming the subscription is
 * left in any table, nor a product version of its custom price points; another subscriber's
 * custom price point and the catalog stay as they were.
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
  dir = tempDir('subscription-leftovers-');
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

describe('purge of a subscription with custom prices, judged by database dumps', () => {
  it('deletes its custom price points and their product versions, and nothing of anyone else', async () => {
    await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC', mode: 'test' });
    const acme = engine.site('acme');
    const family = await acme.catalog.createFamily({ name: 'Plans' });
    await acme.catalog.createProduct(family.id, {
      name: 'Basic',
      handle: 'basic',
      priceInCents: 3000,
      interval: 1,
      intervalUnit: 'month',
    });
    let n = 0;
    const subscribe = (handle: string, priceInCents: number) =>
      acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` },
        creditCard: VISA,
        customPrice: { handle, priceInCents, interval: 1, intervalUnit: 'month' },
      });
    const kept = await subscribe('kept', 2000);
    const purged = await subscribe('purged', 2500);
    // A second custom price point of its own, from a migration.
    await acme.subscriptions.migrate(purged.subscription.id, {
      customPrice: { priceInCents: 2200, interval: 1, intervalUnit: 'month' },
    });
    const own = (await acme.pricePoints.listProductPricePoints('basic', { types: ['custom'] }))
      .filter((v) => v.pricePoint.subscriptionId === purged.subscription.id)
      .map((v) => String(v.pricePoint.id));
    expect(own).toHaveLength(2);

    const before = dumper.dump();
    await acme.subscriptions.purge(purged.subscription.id, {
      ack: purged.customer.id,
      cascade: ['customer', 'payment_profile'],
    });
    const after = dumper.dump();
    const changes = diffDumps(before, after);
    expect(changes.filter((c) => c.change !== 'delete')).toEqual([]);
    for (const [table, dump] of Object.entries(after.tables)) {
      const column = dump.columns.indexOf('subscription_id');
      if (column < 0) continue;
      const left = dump.rows.filter((row) => String(row[column]) === String(purged.subscription.id));
      expect(left, `${table} rows of the purged subscription`).toEqual([]);
    }
    const versions = after.tables.product_versions!;
    const pricePointColumn = versions.columns.indexOf('price_point_id');
    expect(versions.rows.filter((row) => own.includes(String(row[pricePointColumn])))).toEqual([]);
    // Exactly its two price points and their two versions went from the catalog tables.
    const catalogChanges = changes.filter((c) => c.table === 'product_price_points' || c.table === 'product_versions');
    expect(catalogChanges.map((c) => c.table).sort()).toEqual([
      'product_price_points',
      'product_price_points',
      'product_versions',
      'product_versions',
    ]);
    // The other subscriber is untouched, on its own custom price.
    const stillThere = await acme.subscriptions.get(kept.subscription.id);
    expect(stillThere.subscription).toEqual(kept.subscription);
    expect(stillThere.product.version.terms.priceInCents).toBe(2000);
    expect(stillThere.product.pricePoint?.handle).toBe('kept');
  });
});
