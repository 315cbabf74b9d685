import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { rejection, useEngine } from '../support/engine-harness.js';

/** Engine-level behaviour of sites and credentials, run on every adapter. */
export function sitesSuite(harness: StorageHarness): void {
  describe(`sites and credentials (${harness.name})`, () => {
    const fixture = useEngine(harness);

    it('creates a site with credentials shown once and stored only as hashes', async () => {
      const { engine, storage } = fixture();
      const created = await engine.sites.create({
        subdomain: 'Acme',
        currency: 'usd',
        timeZone: 'America/New_York',
        name: 'Acme Inc',
      });
      expect(created.site).toMatchObject({
        subdomain: 'acme',
        currency: 'USD',
        timeZone: 'America/New_York',
        mode: 'test',
        version: 1,
      });
      expect(created.apiKey).toMatch(/^bk_[0-9a-f]{8}_/);
      expect(created.sharedKey.length).toBeGreaterThanOrEqual(24);
      expect(created.direct.apiId).toMatch(/^[0-9a-f]{32}$/);
      const keys = await storage.transaction((tx) => tx.credentials.activeApiKeys(created.site.id));
      expect(keys).toHaveLength(1);
      expect(keys[0]!.secretHash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(keys)).not.toContain(created.apiKey);
      const direct = await storage.transaction((tx) => tx.credentials.activeDirect(created.site.id));
      expect(JSON.stringify(direct)).not.toContain(created.direct.apiPassword);
      expect(direct[0]!.apiSecret).toBe(created.direct.apiSecret);
    });

    it('authenticates the right key for the right site only', async () => {
      const { engine } = fixture();
      const a = await engine.sites.create({ subdomain: 'alpha', currency: 'USD' });
      const b = await engine.sites.create({ subdomain: 'beta', currency: 'EUR' });
      const handle = await engine.authenticate('alpha', a.apiKey);
      expect(handle.subdomain).toBe('alpha');
      expect((await handle.info()).currency).toBe('USD');
      expect((await rejection(engine.authenticate('alpha', b.apiKey))).code).toBe('unauthorized');
      expect((await rejection(engine.authenticate('alpha', `${a.apiKey}x`))).code).toBe('unauthorized');
      expect((await rejection(engine.authenticate('nosuch', a.apiKey))).code).toBe('unauthorized');
      const error = await rejection(engine.authenticate('beta', ''));
      expect(error.message).toBe('HTTP Basic: Access denied.');
      expect(error.httpStatus).toBe(401);
    });

    it('issues, lists and revokes extra API keys', async () => {
      const { engine } = fixture();
      const site = await engine.sites.create({ subdomain: 'keys', currency: 'USD' });
      const second = await engine.sites.createApiKey('keys', 'ci');
      expect((await engine.sites.listApiKeys('keys')).map((k) => k.name)).toEqual(['default', 'ci']);
      await engine.authenticate('keys', second.key);
      await engine.sites.revokeApiKey('keys', second.id);
      expect((await rejection(engine.authenticate('keys', second.key))).code).toBe('unauthorized');
      await engine.authenticate('keys', site.apiKey);
      expect((await rejection(engine.sites.revokeApiKey('keys', second.id))).code).toBe('not_found');
    });

    it('rotates the shared key and the direct credentials', async () => {
      const { engine } = fixture();
      const site = await engine.sites.create({ subdomain: 'rot', currency: 'USD' });
      const shared = await engine.sites.rotateSharedKey('rot');
      expect(shared).not.toBe(site.sharedKey);
      expect((await engine.sites.get('rot')).sharedKey).toBe(shared);
      const direct = await engine.sites.rotateDirectCredentials('rot');
      expect(direct.apiId).not.toBe(site.direct.apiId);
      expect((await rejection(engine.sites.authenticateDirect(site.direct.apiId, site.direct.apiPassword))).code).toBe(
        'unauthorized',
      );
      const ok = await engine.sites.authenticateDirect(direct.apiId, direct.apiPassword);
      expect(ok.site.subdomain).toBe('rot');
      expect((await rejection(engine.sites.authenticateDirect(direct.apiId, 'wrong'))).code).toBe('unauthorized');
    });

    it.each([
      [{ subdomain: 'bad_label', currency: 'USD' }, 'Subdomain: must be a DNS label'],
      [{ subdomain: '-x', currency: 'USD' }, 'Subdomain: must be a DNS label'],
      [{ subdomain: 'a'.repeat(64), currency: 'USD' }, 'Subdomain: must be a DNS label'],
      [{ subdomain: 'ok', currency: 'XYZ' }, "Currency: 'XYZ' is not a supported ISO 4217 currency."],
      [
        { subdomain: 'ok', currency: 'USD', timeZone: 'Mars/Base' },
        "Time zone: 'Mars/Base' is not a valid IANA time zone.",
      ],
      [{ subdomain: 'ok', currency: 'USD', name: '  ' }, 'Name: cannot be blank.'],
    ])('rejects bad input %o and creates nothing', async (input, message) => {
      const { engine } = fixture();
      const error = await rejection(engine.sites.create(input));
      expect(error.code).toBe('validation');
      expect(error.message).toContain(message);
      expect(await engine.sites.list()).toEqual([]);
    });

    it('reports every problem of a bad create at once', async () => {
      const { engine } = fixture();
      const error = await rejection(engine.sites.create({ subdomain: '', currency: 'nope', timeZone: 'x' }));
      expect(error.messages).toEqual([
        'Subdomain: cannot be blank.',
        "Currency: 'nope' is not a supported ISO 4217 currency.",
        "Time zone: 'x' is not a valid IANA time zone.",
        'Name: cannot be blank.',
      ]);
    });

    it('refuses a duplicate subdomain with a validation error and keeps the first site', async () => {
      const { engine } = fixture();
      const first = await engine.sites.create({ subdomain: 'twin', currency: 'USD' });
      const error = await rejection(engine.sites.create({ subdomain: 'TWIN', currency: 'EUR' }));
      expect(error.code).toBe('validation');
      expect(error.message).toBe('Subdomain: has already been taken.');
      const sites = await engine.sites.list();
      expect(sites).toHaveLength(1);
      expect(sites[0]!.currency).toBe('USD');
      await engine.authenticate('twin', first.apiKey);
    });

    it('edits name, zone, formats, currency and settings, bumping the version', async () => {
      const { engine } = fixture();
      await engine.sites.create({ subdomain: 'edit', currency: 'USD' });
      const updated = await engine.sites.update('edit', {
        name: 'Edited',
        timeZone: 'Europe/Berlin',
        currency: 'eur',
        dateFormat: 'DD.MM.YYYY',
        settings: { dunning: { retryCount: 5 }, referralsEnabled: true },
      });
      expect(updated).toMatchObject({
        name: 'Edited',
        timeZone: 'Europe/Berlin',
        currency: 'EUR',
        dateFormat: 'DD.MM.YYYY',
        version: 2,
      });
      expect(updated.settings.dunning).toEqual({ retryCount: 5, retryIntervalHours: 24, finalAction: 'canceled' });
      expect(updated.settings.referralsEnabled).toBe(true);
    });

    it('rejects bad edits without changing anything', async () => {
      const { engine } = fixture();
      await engine.sites.create({ subdomain: 'stay', currency: 'USD' });
      const before = await engine.sites.get('stay');
      for (const input of [
        { timeZone: 'Nowhere/City' },
        { currency: 'ABC' },
        { name: '' },
        { mode: 'prod' as never },
        { settings: { dunning: { retryCount: -1 } } },
        { settings: { dunning: { finalAction: 'delete' as never } } },
      ]) {
        expect((await rejection(engine.sites.update('stay', input))).code).toBe('validation');
      }
      expect(await engine.sites.get('stay')).toEqual(before);
      expect((await rejection(engine.sites.update('missing', { name: 'x' }))).code).toBe('not_found');
    });

    it('goes live and back to test when it has no test data', async () => {
      const { engine } = fixture();
      await engine.sites.create({ subdomain: 'golive', currency: 'USD' });
      expect((await engine.sites.update('golive', { mode: 'live' })).mode).toBe('live');
      expect((await engine.sites.update('golive', { mode: 'test' })).mode).toBe('test');
    });

    it('clones settings, currency and zone into a new test site with new credentials', async () => {
      const { engine } = fixture();
      const source = await engine.sites.create({
        subdomain: 'src',
        currency: 'JPY',
        timeZone: 'Asia/Tokyo',
        settings: { periodRule: 'sticky' },
      });
      const copy = await engine.sites.clone('src', { subdomain: 'dst' });
      expect(copy.site).toMatchObject({ subdomain: 'dst', currency: 'JPY', timeZone: 'Asia/Tokyo', mode: 'test' });
      expect(copy.site.settings.periodRule).toBe('sticky');
      expect(copy.apiKey).not.toBe(source.apiKey);
      expect(copy.sharedKey).not.toBe(source.sharedKey);
      expect((await rejection(engine.authenticate('dst', source.apiKey))).code).toBe('unauthorized');
    });

    it('clones the catalog at its current versions, in one command', async () => {
      const { engine } = fixture();
      await engine.sites.create({ subdomain: 'shop', currency: 'USD' });
      const shop = engine.site('shop');
      const family = await shop.catalog.createFamily({ name: 'Plans' });
      const plan = await shop.catalog.createProduct(family.id, {
        name: 'Pro',
        handle: 'pro',
        priceInCents: 1000,
        interval: 1,
        intervalUnit: 'month',
      });
      await shop.catalog.updateProduct(plan.product.id, { priceInCents: 2500 });
      await shop.components.create(family.id, {
        kind: 'quantity_based_component',
        name: 'Seats',
        unitName: 'seat',
        pricingScheme: 'per_unit',
        unitPrice: '5.00',
      });
      await shop.coupons.create({ name: 'Half', code: 'HALF', percentage: '50', productFamilyId: family.id });
      await shop.subscriptions.create({
        productHandle: 'pro',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: { fullNumber: '1', expirationMonth: 1, expirationYear: 2031 },
      });
      await engine.sites.clone('shop', { subdomain: 'shop-copy' });
      const copy = engine.site('shop-copy');
      const copied = await copy.catalog.getProduct('pro');
      expect(copied.version).toMatchObject({ version: 1, terms: { priceInCents: 2500 } });
      expect((await copy.catalog.listFamilies()).map((f) => f.handle)).toEqual([family.handle]);
      expect((await copy.components.list()).map((c) => c.component.name)).toEqual(['Seats']);
      expect((await copy.coupons.findByCode('HALF')).redemptions).toBe(0);
      expect(await copy.subscriptions.list()).toEqual([]);
      const taken = await rejection(engine.sites.clone('shop', { subdomain: 'shop-copy' }));
      expect(taken.message).toBe('Subdomain: has already been taken.');
      expect((await engine.sites.list()).map((x) => x.subdomain)).toEqual(['shop', 'shop-copy']);
    });

    it('clears test data only in test mode, and then lets the site go live', async () => {
      const { engine, storage } = fixture();
      await engine.sites.create({ subdomain: 'golive2', currency: 'USD' });
      const site = engine.site('golive2');
      const family = await site.catalog.createFamily({ name: 'Plans' });
      await site.catalog.createProduct(family.id, {
        name: 'Pro',
        handle: 'pro',
        priceInCents: 1000,
        interval: 1,
        intervalUnit: 'month',
      });
      await site.subscriptions.create({
        productHandle: 'pro',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: { fullNumber: '1', expirationMonth: 1, expirationYear: 2031 },
      });
      const refused = await rejection(engine.sites.update('golive2', { mode: 'live' }));
      expect(refused.message).toBe('Mode: the site has test data; clear the site data before going live.');
      const currency = await rejection(engine.sites.update('golive2', { currency: 'EUR' }));
      expect(currency.message).toBe('Currency: cannot be changed while the site has subscriptions or transactions.');
      await engine.sites.clearData('golive2');
      const id = (await engine.sites.get('golive2')).id;
      expect(await storage.transaction((tx) => tx.siteData.counts(id))).toEqual({
        customers: 0,
        subscriptions: 0,
        transactions: 0,
      });
      expect((await site.catalog.getProduct('pro')).product.handle).toBe('pro');
      expect((await engine.sites.update('golive2', { mode: 'live' })).mode).toBe('live');
      const live = await rejection(engine.sites.clearData('golive2'));
      expect(live.message).toBe('Site data can only be cleared on a site in test mode.');
    });

    it('deletes a site and its credentials', async () => {
      const { engine } = fixture();
      const site = await engine.sites.create({ subdomain: 'del', currency: 'USD' });
      await engine.sites.delete('del');
      expect((await rejection(engine.sites.get('del'))).code).toBe('not_found');
      expect((await rejection(engine.authenticate('del', site.apiKey))).code).toBe('unauthorized');
      expect((await rejection(engine.sites.delete('del'))).code).toBe('not_found');
    });

    it('records a site_update event and tells listeners only after commit', async () => {
      const { engine, storage } = fixture();
      const site = await engine.sites.create({ subdomain: 'evt', currency: 'USD' });
      const heard: string[] = [];
      const stop = engine.on('site_update', (event) => heard.push(`${event.key}:${event.siteId}`));
      await engine.sites.update('evt', { name: 'New' });
      expect(heard).toEqual([`site_update:${site.site.id}`]);
      await rejection(engine.sites.update('evt', { timeZone: 'bad/zone' }));
      expect(heard).toHaveLength(1);
      stop();
      await engine.sites.update('evt', { name: 'Newer' });
      expect(heard).toHaveLength(1);
      const outbox = await storage.transaction((tx) => tx.outbox.listAfter(site.site.id, 0, 10));
      expect(outbox.map((e) => e.key)).toEqual(['site_update', 'site_update']);
    });

    it('rejects an unknown clear scope', async () => {
      const { engine } = fixture();
      await engine.sites.create({ subdomain: 'clr', currency: 'USD' });
      expect((await rejection(engine.sites.clearData('clr', 'everything' as never))).code).toBe('validation');
      await engine.sites.clearData('clr', 'customers');
    });
  });
}
