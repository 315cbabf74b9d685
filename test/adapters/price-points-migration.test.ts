import Database from 'better-sqlite3';
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/sqlite.js';

/**
 * Migration 9 on a database that already has products: each product gets its default price point
 * at its current version, its versions are marked as that price point's, and billing goes on.
 */
describe('migration 9 (price points) on existing products', () => {
  it('backfills a default price point per product and marks its versions', async () => {
    const dir = tempDir();
    const file = dir.file('billing.sqlite');
    const database = new Database(file);
    const storage = createSqliteStorage({ database });
    try {
      await storage.migrate();
      const engine = createBillingEngine({
        storage,
        clock: new ManualClock('2026-03-01T12:00:00Z'),
        gateway: createTestGateway(),
      });
      await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
      const acme = engine.site('acme');
      const family = await acme.catalog.createFamily({ name: 'Plans' });
      for (const handle of ['basic', 'pro']) {
        await acme.catalog.createProduct(family.id, {
          name: handle,
          handle,
          priceInCents: 1000,
          interval: 1,
          intervalUnit: 'month',
        });
      }
      await acme.catalog.updateProduct('pro', { priceInCents: 2000 });
      // The database as migration 8 left it: no price point table, no marks on versions.
      const side = new Database(file);
      side.exec('drop table product_price_points');
      side.exec('alter table product_versions drop column price_point_id');
      side.exec('delete from billing_migrations where id = 9');
      await storage.migrate();
      const points = side
        .prepare('select product_id, name, handle, type, version from product_price_points order by product_id')
        .all();
      const products = side.prepare('select id, current_version from products order by id').all() as {
        id: number;
        current_version: number;
      }[];
      expect(points).toEqual(
        products.map((p) => ({
          product_id: p.id,
          name: 'Original',
          handle: 'original',
          type: 'default',
          version: p.current_version,
        })),
      );
      const unmarked = side
        .prepare('select count(*) as n from product_versions where price_point_id is null')
        .get() as {
        n: number;
      };
      expect(unmarked.n).toBe(0);
      side.close();
      // The engine reads the backfilled price points and versions the default on the next change.
      const pro = await acme.catalog.updateProduct('pro', { priceInCents: 2500 });
      expect(pro.pricePoint?.handle).toBe('original');
      expect((await acme.pricePoints.getProductPricePoint('pro', 'original')).terms.priceInCents).toBe(2500);
    } finally {
      await storage.close();
      dir.dispose();
    }
  });
});
