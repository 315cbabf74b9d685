/**
 * Server bugs the database-dump fuzz found (issue 11, part 5), each reproduced by one fixed request:
 * a rejected request (4xx) that still changed the database, shown by a dump of the SQLite file taken
 * before and after. All four failed on the tree this work started from; the routes were fixed in
 * the working tree while it was being written (subscription-routes.ts now makes one
 * `subscriptions.update` command, metafield-routes.ts one `updateFields`), so they now stand as
 * regression tests, and the fuzz templates (support/fuzz-cases.ts) send those routes several changes
 * at once again.
 */
import { describe, expect, it } from 'vitest';
import { basic } from './support/client.js';
import { describeChanges, diffDumps, dumpDatabase } from './support/db-dump.js';
import { noNetworkFetch } from './support/fuzz-runner.js';
import { seedSiteWorld } from './support/fuzz-world.js';
import { type HttpFixture, useHttpFixture } from './support/http-fixture.js';

/** Sends a JSON request as acme and returns its status and what it changed in the database. */
async function sendAndDiff(f: HttpFixture, method: string, path: string, json: unknown) {
  const file = f.databaseFile ?? '';
  const before = dumpDatabase(file);
  const reply = await f.raw({
    method,
    path,
    headers: {
      host: `acme.localhost:${f.port}`,
      authorization: basic(f.keys.acme),
      accept: 'application/json',
      'content-type': 'application/json',
    },
    body: JSON.stringify(json),
  });
  const changes = diffDumps(before, dumpDatabase(file));
  return { reply, changes, report: `${reply.status} ${reply.text}\n${describeChanges(changes)}` };
}

describe('bugs found by the fuzz: rejected requests that changed the database', () => {
  const http = useHttpFixture({ rateLimit: false, storage: 'sqlite-file', webhooks: { fetch: noNetworkFetch } });

  // examples/http/routes/subscription-routes.ts `update` changed the card, the product and the
  // billing date with three engine commands in turn, each committing on its own: when a later one
  // failed, the answer was its 4xx, but the earlier changes stayed.
  it('PUT /subscriptions/{id}.json with a new card and an unknown product: refused, yet the card is replaced', async () => {
    const f = http();
    const w = await seedSiteWorld(f, 'acme');
    const { reply, changes, report } = await sendAndDiff(f, 'PUT', `/subscriptions/${w.subscriptionId}.json`, {
      subscription: {
        credit_card_attributes: { full_number: '5555555555554444', expiration_month: '10', expiration_year: '2031' },
        product_handle: 'no-such-product',
      },
    });
    expect(reply.status, report).toBeGreaterThanOrEqual(400);
    expect(reply.status, report).toBeLessThan(500);
    // Observed before the fix: 422 "Product with API Handle 'no-such-product' does not exist for this
    // site.", with a new payment_profiles row (master, last four 4444), the subscription pointing at
    // it, and a subscription_card_update event in the outbox.
    expect(changes, report).toEqual([]);
  });

  it('POST /subscriptions/{id}.json with a product change and an impossible billing date: refused, yet the product changes', async () => {
    const f = http();
    const w = await seedSiteWorld(f, 'acme');
    const { reply, changes, report } = await sendAndDiff(f, 'POST', `/subscriptions/${w.subscriptionId}.json`, {
      subscription: { product_handle: w.otherProductHandle, next_billing_at: '2026-02-30' },
    });
    expect(reply.status, report).toBeGreaterThanOrEqual(400);
    expect(reply.status, report).toBeLessThan(500);
    // Observed before the fix: 422 "Next billing at: is not a valid date." (the engine's check, after
    // the wire let the date through), with the subscription moved to the other product and a
    // subscription_product_change event in the outbox.
    expect(changes, report).toEqual([]);
  });

  // examples/http/routes/metafield-routes.ts `PUT /{resource}/metafields.json` ran each item of the
  // list as its own engine command, so an item naming a field that does not exist failed after the
  // items before it were committed. Fixed in the working tree while this file was written (the route
  // now makes one `updateFields` command); these two stay as its regression tests.
  for (const resource of ['customers', 'subscriptions'] as const) {
    it(`PUT /${resource}/metafields.json renaming a field and then a missing one: 404, yet the first rename is kept`, async () => {
      const f = http();
      const w = await seedSiteWorld(f, 'acme');
      const field = resource === 'customers' ? w.customerFieldName : w.subscriptionFieldName;
      const { reply, changes, report } = await sendAndDiff(f, 'PUT', `/${resource}/metafields.json`, {
        metafields: [
          { current_name: field, name: `${field}_renamed` },
          { current_name: 'no_such_field', name: 'other' },
        ],
      });
      expect(reply.status, report).toBe(404);
      // Observed before the fix: the metafields row renamed to `<field>_renamed`, its metadata rows with it.
      expect(changes, report).toEqual([]);
    });
  }
});
