import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { buildSecureFields } from '../../src/direct-post-helpers.js';
import { DirectPostService, parseDirectForm } from '../../src/services/direct-post-service.js';
import { SubscriptionService } from '../../src/services/subscription-service.js';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const ADA = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

/** `acme` (USD) and `globex` (EUR), each with a 10.00-a-month product `basic`. */
async function setup(f: EngineFixture) {
  const acmeSite = await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  await f.engine.sites.create({ subdomain: 'globex', currency: 'EUR', timeZone: 'UTC' });
  for (const subdomain of ['acme', 'globex']) {
    const site = f.engine.site(subdomain);
    const family = await site.catalog.createFamily({ name: 'Plans' });
    await site.catalog.createProduct(family.id, {
      name: 'Basic',
      handle: 'basic',
      priceInCents: 1000,
      interval: 1,
      intervalUnit: 'month',
    });
  }
  return {
    acme: f.engine.site('acme'),
    globex: f.engine.site('globex'),
    acmeSite: acmeSite.site,
    creds: acmeSite.direct,
  };
}

/** What a refused signup must leave as it was: subscriptions, customers, the outbox and the gateway. */
async function traces(f: EngineFixture, subdomain: string) {
  const site = f.engine.site(subdomain);
  return {
    subscriptions: await site.subscriptions.list(),
    customers: await site.customers.list(),
    events: await f.storage.transaction(async (tx) => {
      const record = await tx.sites.findBySubdomain(subdomain);
      return tx.outbox.listAfter(record!.id, 0, 10_000);
    }),
    charges: f.gateway.chargeCalls,
  };
}

/** The signup's `currency` on a site with exactly one currency, on every adapter. */
export function signupCurrencySuite(harness: StorageHarness): void {
  describe(`signup currency (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-03-01T12:00:00Z');

    it("signs up when the currency is the site's, in any letter case, and when it is blank", async () => {
      const f = fixture();
      const { acme, globex } = await setup(f);
      let n = 0;
      for (const currency of ['USD', 'usd', ' Usd ', '']) {
        const view = await acme.subscriptions.create({
          productHandle: 'basic',
          customer: { ...ADA, email: `ada${++n}@example.com` },
          creditCard: VISA,
          currency,
        });
        expect(view.subscription.state).toBe('active');
      }
      expect(f.gateway.chargeCalls).toBe(4);
      const euro = await globex.subscriptions.create({
        productHandle: 'basic',
        customer: ADA,
        creditCard: VISA,
        currency: 'eur',
      });
      expect(euro.subscription.state).toBe('active');
    });

    it('refuses any other currency with a 422 naming it, before anything is written or charged', async () => {
      const f = fixture();
      const { acme, globex } = await setup(f);
      const before = await traces(f, 'acme');
      const refused = await rejection(
        acme.subscriptions.create({ productHandle: 'basic', customer: ADA, creditCard: VISA, currency: 'eur' }),
      );
      expect([refused.httpStatus, refused.details]).toEqual([
        422,
        [
          {
            attribute: 'currency',
            message: 'Currency: EUR is not defined on the site; subscriptions on this site are billed in USD.',
          },
        ],
      ]);
      // Reported with the signup's other problems, all at once.
      const both = await rejection(
        acme.subscriptions.create({ productHandle: 'nope', customer: ADA, creditCard: VISA, currency: 'EURO' }),
      );
      expect(both.details.map((d) => d.attribute).sort()).toEqual(['currency', 'product_handle']);
      expect(both.messages).toContain('Currency: must be a three-letter ISO 4217 code.');
      expect(await traces(f, 'acme')).toEqual(before);
      const usdOnGlobex = await rejection(
        globex.subscriptions.create({ productHandle: 'basic', customer: ADA, creditCard: VISA, currency: 'USD' }),
      );
      expect(usdOnGlobex.messages).toEqual([
        'Currency: USD is not defined on the site; subscriptions on this site are billed in EUR.',
      ]);
      expect(f.gateway.chargeCalls).toBe(0);
    });

    it('refuses another currency in a signup preview too', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const refused = await rejection(acme.subscriptions.previewSignup({ productHandle: 'basic', currency: 'GBP' }));
      expect(refused.messages).toEqual([
        'Currency: GBP is not defined on the site; subscriptions on this site are billed in USD.',
      ]);
      const preview = await acme.subscriptions.previewSignup({ productHandle: 'basic', currency: 'usd' });
      expect(preview).toBeDefined();
      expect(f.gateway.chargeCalls).toBe(0);
    });

    it('reads signup[currency] on a direct post: the site currency signs up, another is refused (4220)', async () => {
      const f = fixture();
      const { acme, creds } = await setup(f);
      const deps = { storage: f.storage, clock: f.clock, gateway: f.gateway, emitter: { emit() {} } };
      const direct = new DirectPostService(deps, new SubscriptionService(deps));
      /** A signed form: with `signed`, the currency is in the secure data; else a normal field beside the product. */
      const post = (currency: string, email: string, signed: boolean) => {
        const secure = buildSecureFields({
          apiId: creds.apiId,
          apiSecret: creds.apiSecret,
          data: signed ? { signup: { product: { handle: 'basic' }, currency } } : {},
          redirectUri: 'https://merchant.example/return',
          now: f.clock.now(),
        });
        const body = new URLSearchParams([
          ...Object.entries(secure.fields),
          ...(signed ? [] : [['signup[product][handle]', 'basic'] as [string, string]]),
          ['signup[customer][first_name]', 'Ada'],
          ['signup[customer][last_name]', 'Lovelace'],
          ['signup[customer][email]', email],
          ['signup[payment_profile][card_number]', '4111111111111111'],
          ['signup[payment_profile][expiration_month]', '12'],
          ['signup[payment_profile][expiration_year]', '2030'],
          ...(signed ? [] : [['signup[currency]', currency] as [string, string]]),
        ]);
        return direct.signup(parseDirectForm(body.toString()), { contentType: 'form' });
      };
      const before = await traces(f, 'acme');
      const refused = await post('CAD', 'ada@example.com', true);
      expect([refused.statusCode, refused.resultCode]).toEqual([422, '4220']);
      expect((refused.call.response.result as { errors: unknown }).errors).toEqual([
        {
          attribute: 'currency',
          message: 'Currency: CAD is not defined on the site; subscriptions on this site are billed in USD.',
        },
      ]);
      const unsigned = await post('cad', 'ada@example.com', false);
      expect((unsigned.call.response.result as { errors: { message: string }[] }).errors.map((e) => e.message)).toEqual(
        ['Currency: CAD is not defined on the site; subscriptions on this site are billed in USD.'],
      );
      expect(await traces(f, 'acme')).toEqual(before);
      const accepted = await post('usd', 'ada2@example.com', false);
      expect(accepted.resultCode).toBe('2000');
      const signedOwn = await post('USD', 'ada3@example.com', true);
      expect(signedOwn.resultCode).toBe('2000');
      expect(await acme.subscriptions.list()).toHaveLength(2);
    });
  });
}
