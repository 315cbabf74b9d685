import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { formParamsFromJson } from 'billing-engine/chargify';
import { afterAll, describe, expect, it } from 'vitest';

const NUMBERS = ['4111111111111111', '5555555555554444', '378282246310005', '6011111111111117'];

// A full card number must never reach storage (DESIGN §3): after card signups, card updates, a
// payment-profile update, webhook fan-out and a direct-post signup, every row of every table is
// read raw from the SQLite file and searched for any of the numbers used.
describe('no full card number in storage (SQLite, raw tables)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'billing-cards-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps only tokens, card types and last fours', async () => {
    const file = join(dir, 'cards.sqlite');
    const engine = createBillingEngine({
      storage: createSqliteStorage({ database: file }),
      clock: new ManualClock('2027-05-01T12:00:00Z'),
      gateway: createTestGateway(),
      webhooks: { allowLocalReceivers: true },
    });
    await engine.migrate();
    const created = await engine.sites.create({ subdomain: 'acme', currency: 'USD' });
    const acme = engine.site('acme');
    await acme.webhooks.createEndpoint({
      url: 'http://127.0.0.1:9/hook',
      webhookSubscriptions: ['signup_success', 'subscription_card_update', 'payment_success'],
    });
    const family = await acme.catalog.createFamily({ name: 'Plans' });
    await acme.catalog.createProduct(family.id, {
      name: 'Basic',
      handle: 'basic',
      priceInCents: 1000,
      interval: 1,
      intervalUnit: 'month',
    });
    const first = await acme.subscriptions.create({
      productHandle: 'basic',
      customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
      creditCard: { fullNumber: NUMBERS[0]!, expirationMonth: 1, expirationYear: 2031, cvv: '123' },
    });
    await acme.subscriptions.updateCard(first.subscription.id, {
      fullNumber: NUMBERS[1]!,
      expirationMonth: '02',
      expirationYear: '2032',
    });
    const updated = await acme.subscriptions.get(first.subscription.id);
    await acme.paymentProfiles.update(updated.paymentProfile!.id, {
      fullNumber: NUMBERS[2]!,
      expirationMonth: 3,
      expirationYear: 2033,
    });
    const direct = await engine.direct.signup(
      {
        params: formParamsFromJson({
          signup: {
            product: { handle: 'basic' },
            customer: { first_name: 'C', last_name: 'D', email: 'c@d.co' },
            payment_profile: { card_number: NUMBERS[3], expiration_month: '4', expiration_year: '2034', cvv: '999' },
          },
        }),
      },
      { contentType: 'json', basic: { apiId: created.direct.apiId, password: created.direct.apiPassword } },
    );
    expect(direct.resultCode).toBe('2000');
    await engine.close();

    const db = new Database(file, { readonly: true });
    try {
      const tables = db
        .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
        .all() as { name: string }[];
      expect(tables.length).toBeGreaterThan(15);
      let rows = 0;
      for (const { name } of tables) {
        for (const row of db.prepare(`select * from "${name}"`).all()) {
          rows += 1;
          const text = JSON.stringify(row);
          for (const number of NUMBERS) expect(text, `table ${name}`).not.toContain(number);
        }
      }
      expect(rows).toBeGreaterThan(30);
      // The check can fail: what we keep of the cards is there.
      const profiles = db.prepare('select last_four from payment_profiles order by id').all() as {
        last_four: string;
      }[];
      // The second profile's card was replaced by the payment-profile update (4444 -> 0005).
      expect(profiles.map((p) => p.last_four)).toEqual(['1111', '0005', '1117']);
      const webhooks = db.prepare('select body from webhooks').all() as { body: string }[];
      expect(webhooks.length).toBeGreaterThan(0);
      expect(webhooks.some((w) => w.body.includes('XXXX-XXXX-XXXX-'))).toBe(true);
    } finally {
      db.close();
    }
  }, 60_000);
});
