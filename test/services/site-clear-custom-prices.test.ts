/**
 * A site data clear removes every subscription, and with them what a purge removes with one: the
 * custom price points made for them (and the product versions holding their terms), their prepaid
 * replenishment checks and the mail jobs about them. The catalog, and other sites, keep theirs.
 */
import { createBillingEngine } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { capturingMailer } from '../support/capturing-mailer.js';
import { type EngineFixture, useEngine } from '../support/engine-harness.js';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { sqliteHarness } from '../support/sqlite.js';
import { memoryHarness } from '../support/storages.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/**
 * `acme` and `globex` (test mode), each with `basic` (10.00 a month) and a catalog price point
 * `triple` (30.00 a month); on each, a subscription at a custom price (handle `mine`).
 */
async function setup(f: EngineFixture) {
  const sites: Record<string, number> = {};
  const products: Record<string, number> = {};
  let n = 0;
  for (const subdomain of ['acme', 'globex']) {
    const created = await f.engine.sites.create({ subdomain, currency: 'USD', timeZone: 'UTC', mode: 'test' });
    sites[subdomain] = created.site.id;
    const site = f.engine.site(subdomain);
    const family = await site.catalog.createFamily({ name: 'Plans' });
    const basic = await site.catalog.createProduct(family.id, {
      name: 'Basic',
      handle: 'basic',
      priceInCents: 1000,
      interval: 1,
      intervalUnit: 'month',
    });
    products[subdomain] = basic.product.id;
    await site.pricePoints.createProductPricePoint('basic', {
      name: 'Triple',
      handle: 'triple',
      priceInCents: 3000,
      interval: 1,
      intervalUnit: 'month',
    });
  }
  const subscribe = (subdomain: string, input: Record<string, unknown>) =>
    f.engine.site(subdomain).subscriptions.create({
      productHandle: 'basic',
      customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` },
      creditCard: VISA,
      ...input,
    });
  return { sites, products, subscribe };
}

/** Every price point of `basic` on a site, custom ones included, as [handle, type]. */
async function pricePointsOf(f: EngineFixture, subdomain: string): Promise<string[][]> {
  const views = await f.engine.site(subdomain).pricePoints.listProductPricePoints('basic', {
    includeArchived: true,
    types: ['default', 'catalog', 'custom'],
  });
  return views.map((v) => [v.pricePoint.handle, v.pricePoint.type]);
}

/** Which of a product's `versions` the storage still holds. */
function versionsKept(f: EngineFixture, siteId: number, productId: number, versions: readonly number[]) {
  return f.storage.transaction(async (tx) => {
    const kept: number[] = [];
    for (const version of versions)
      if ((await tx.catalog.findProductVersion(siteId, productId, version)) !== undefined) kept.push(version);
    return kept;
  });
}

function siteClearSuite(harness: StorageHarness): void {
  describe(`site data clear and custom prices (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-03-01T12:00:00Z');

    for (const scope of ['all', 'customers'] as const) {
      it(`scope ${scope}: removes the custom price points of the removed subscriptions and their terms, and nothing of the catalog`, async () => {
        const f = fixture();
        const s = await setup(f);
        const acme = f.engine.site('acme');
        const mine = await s.subscribe('acme', {
          customPrice: { handle: 'mine', priceInCents: 700, interval: 1, intervalUnit: 'month' },
        });
        // A migration onto a second custom price point (handle made from the subscription id).
        const moved = await acme.subscriptions.migrate(mine.subscription.id, {
          customPrice: { priceInCents: 900, interval: 1, intervalUnit: 'month' },
        });
        const plain = await s.subscribe('acme', { productPricePointHandle: 'triple' });
        const theirs = await s.subscribe('globex', {
          customPrice: { handle: 'mine', priceInCents: 800, interval: 1, intervalUnit: 'month' },
        });
        const customVersions = [mine.subscription.productVersion, moved.subscription.productVersion];
        const catalogVersions = [
          plain.subscription.productVersion,
          (await acme.catalog.getProduct('basic')).version.version,
        ];
        expect(new Set([...customVersions, ...catalogVersions]).size).toBe(4);
        expect(await pricePointsOf(f, 'acme')).toEqual(
          expect.arrayContaining([
            ['mine', 'custom'],
            [moved.product.pricePoint!.handle, 'custom'],
          ]),
        );
        expect(await versionsKept(f, s.sites.acme!, s.products.acme!, customVersions)).toEqual(customVersions);

        await f.engine.sites.clearData('acme', scope);

        // The catalog stays: the default and `triple` price points and their versions.
        expect((await pricePointsOf(f, 'acme')).sort()).toEqual([
          ['original', 'default'],
          ['triple', 'catalog'],
        ]);
        expect(await versionsKept(f, s.sites.acme!, s.products.acme!, customVersions)).toEqual([]);
        expect(await versionsKept(f, s.sites.acme!, s.products.acme!, catalogVersions)).toEqual(catalogVersions);
        for (const pricePoint of [mine.product.pricePoint!, moved.product.pricePoint!])
          await expect(acme.pricePoints.getProductPricePoint('basic', pricePoint.id)).rejects.toMatchObject({
            code: 'not_found',
          });
        // Another site keeps its subscriber's custom price point, and renews it.
        expect(await pricePointsOf(f, 'globex')).toContainEqual(['mine', 'custom']);
        expect(
          await versionsKept(f, s.sites.globex!, s.products.globex!, [theirs.subscription.productVersion]),
        ).toEqual([theirs.subscription.productVersion]);
        f.clock.set('2026-04-01T12:00:01Z');
        await f.engine.runDue();
        const renewed = await f.engine.site('globex').subscriptions.get(theirs.subscription.id);
        expect([renewed.subscription.periodIndex, renewed.product.version.terms.priceInCents]).toEqual([1, 800]);

        // The handle is free again, a new custom price gets terms of its own, and the catalog signs up.
        const again = await s.subscribe('acme', {
          customPrice: { handle: 'mine', priceInCents: 600, interval: 1, intervalUnit: 'month' },
        });
        expect(again.product.pricePoint).toMatchObject({ handle: 'mine', subscriptionId: again.subscription.id });
        expect((await acme.subscriptions.get(again.subscription.id)).product.version.terms.priceInCents).toBe(600);
        const onTriple = await s.subscribe('acme', { productPricePointHandle: 'triple' });
        expect(onTriple.product.version.terms.priceInCents).toBe(3000);
        expect((await pricePointsOf(f, 'acme')).sort()).toEqual([
          ['mine', 'custom'],
          ['original', 'default'],
          ['triple', 'catalog'],
        ]);
      });

      it(`scope ${scope}: removes the prepaid replenishment checks and the mail jobs about the removed records`, async () => {
        const f = fixture();
        const s = await setup(f);
        const capture = capturingMailer();
        // The same storage and clock with a mailer, to queue and send mail.
        const mailing = createBillingEngine({
          storage: f.storage,
          clock: f.clock,
          gateway: f.gateway,
          mail: { mailer: capture.mailer, siteOrigin: (subdomain) => `https://${subdomain}.billing.test` },
        });
        const prepaid = {
          initialFundingAmountInCents: 1500,
          autoReplenish: true,
          replenishToAmountInCents: 3000,
          replenishThresholdAmountInCents: 1000,
        };
        const keysOf = (siteId: number) =>
          f.storage.transaction(async (tx) => {
            // A set: subjects of different kinds may have equal ids.
            const keys = new Set<string>();
            for (const subject of [0, ...subjects.get(siteId)!])
              for (const row of await tx.dueWork.pendingFor(siteId, subject, ['reconcile_payment', 'mail_delivery']))
                if (row.uniqueKey.startsWith('prepaid_replenishment:') || row.uniqueKey.startsWith('mail:'))
                  keys.add(row.uniqueKey);
            return [...keys].sort();
          });
        const subjects = new Map<number, number[]>();
        const emails = new Map<string, string>();
        for (const subdomain of ['acme', 'globex']) {
          const site = mailing.site(subdomain);
          const view = await s.subscribe(subdomain, {
            paymentCollectionMethod: 'prepaid',
            prepaidConfiguration: prepaid,
          });
          const [invoice] = (await site.invoices.list({ subscriptionId: view.subscription.id })).invoices;
          await site.mail.requestPaymentUpdate(view.subscription.id);
          await site.mail.sendInvoice(invoice!.uid);
          await site.portalAccess.enable(view.customer.id, { invite: true });
          subjects.set(s.sites[subdomain]!, [view.subscription.id, invoice!.id, view.customer.id]);
          emails.set(subdomain, view.customer.email);
        }
        for (const subdomain of ['acme', 'globex']) {
          const keys = await keysOf(s.sites[subdomain]!);
          // A replenishment check (the signup drew on its balance) and the three mails.
          expect(keys.filter((k) => k.startsWith('prepaid_replenishment:')).length).toBeGreaterThan(0);
          expect(keys.filter((k) => k.startsWith('mail:')).map((k) => k.split(':')[1])).toEqual([
            'invoice',
            'payment_update_request',
            'portal_invitation',
          ]);
        }
        const globexKeys = await keysOf(s.sites.globex!);

        await f.engine.sites.clearData('acme', scope);

        expect(await keysOf(s.sites.acme!)).toEqual([]);
        expect(
          await f.storage.transaction((tx) =>
            tx.dueWork.countDue({
              until: new Date('2100-01-01T00:00:00Z'),
              kinds: ['reconcile_payment', 'mail_delivery'],
              siteId: s.sites.acme!,
            }),
          ),
        ).toBe(0);
        expect(await keysOf(s.sites.globex!)).toEqual(globexKeys);
        // What is left runs: globex's three mails go out, none about acme's removed records.
        await mailing.runDue();
        expect(capture.sent.map((m) => m.to)).toEqual([
          [emails.get('globex')],
          [emails.get('globex')],
          [emails.get('globex')],
        ]);
      });
    }
  });
}

afterAll(closePostgresTestServer);
siteClearSuite(memoryHarness);
siteClearSuite(sqliteHarness);
siteClearSuite(postgresHarness());
