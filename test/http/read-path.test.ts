/**
 * The HTTP read path (issue 18): a GET authenticates and reads the site once per request (the
 * serializers take the site from authentication), the app's cache of verified API keys skips the
 * key check within its TTL without ever trusting a wrong key, and the bodies are the same either way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BillingEngine, createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifiedKeyCache } from '../../examples/http/basic-credentials.js';
import { createHttpApp } from '../../examples/http/create-http-app.js';

describe('the cache of verified API keys', () => {
  it('answers the verified key within the TTL and nothing else', () => {
    let t = 0;
    const cache = createVerifiedKeyCache<string>({ ttlMs: 1000, now: () => t });
    cache.set('acme', 'key-a', 'acme-site');
    expect(cache.get('acme', 'key-a')).toBe('acme-site');
    expect(cache.get('acme', 'key-b')).toBeUndefined();
    expect(cache.get('acme', 'key-a ')).toBeUndefined();
    expect(cache.get('globex', 'key-a')).toBeUndefined();
    t = 999;
    expect(cache.get('acme', 'key-a')).toBe('acme-site');
    t = 1000;
    // Expired: the engine is asked again, which is when a revocation takes effect.
    expect(cache.get('acme', 'key-a')).toBeUndefined();
    expect(cache.get('acme', 'key-a')).toBeUndefined();
  });

  it('keeps several keys of one site and forgets the least recently used sites past its size', () => {
    const cache = createVerifiedKeyCache<number>({ ttlMs: 1000, maxSites: 2, now: () => 0 });
    cache.set('a', 'k1', 1);
    cache.set('a', 'k2', 2);
    cache.set('b', 'k', 3);
    expect(cache.get('a', 'k1')).toBe(1);
    expect(cache.get('a', 'k2')).toBe(2);
    cache.set('c', 'k', 4);
    // `a` was used last, so `b` went.
    expect(cache.get('b', 'k')).toBeUndefined();
    expect(cache.get('a', 'k1')).toBe(1);
    expect(cache.get('c', 'k')).toBe(4);
  });
});

describe('GET through the app on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'billing-read-path-'));
  const statements: string[] = [];
  let recording = false;
  let engine: BillingEngine;
  let apiKey: string;
  let path: string;

  beforeAll(async () => {
    const storage = createSqliteStorage({
      database: join(dir, 'read.sqlite'),
      trace: (sql) => {
        if (recording) statements.push(sql);
      },
    });
    engine = createBillingEngine({
      storage,
      clock: new ManualClock('2026-01-15T12:00:00Z'),
      gateway: createTestGateway(),
    });
    await engine.migrate();
    ({ apiKey } = await engine.sites.create({ subdomain: 'acme', currency: 'EUR', timeZone: 'Europe/Berlin' }));
    const site = engine.site('acme');
    await site.catalog.createFamily({ name: 'Plans', handle: 'plans' });
    await site.catalog.createProduct('plans', {
      name: 'Monthly',
      handle: 'monthly',
      priceInCents: 4900,
      interval: 1,
      intervalUnit: 'month',
    });
    const { subscription } = await site.subscriptions.create({
      productHandle: 'monthly',
      customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
      creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
    });
    path = `/subscriptions/${subscription.id}.json`;
  });
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const headers = (key: string) => ({
    host: 'acme.localhost',
    authorization: `Basic ${Buffer.from(`${key}:x`).toString('base64')}`,
  });

  async function counted(
    work: () => Response | Promise<Response>,
  ): Promise<{ status: number; body: string; reads: string[] }> {
    statements.length = 0;
    recording = true;
    try {
      const response = await work();
      return { status: response.status, body: await response.text(), reads: [...statements] };
    } finally {
      recording = false;
    }
  }

  const siteReads = (sqls: string[]) => sqls.filter((s) => /from "sites" where "subdomain"/.test(s)).length;
  const keyChecks = (sqls: string[]) => sqls.filter((s) => /from "api_keys"/.test(s)).length;

  it('checks the key once per request and serializes from the site it read, with the cache off', async () => {
    const app = createHttpApp({ engine, rateLimit: false, apiKeyCacheTtlMs: 0 });
    for (let i = 0; i < 2; i++) {
      const reply = await counted(() => app.request(`http://acme.localhost${path}`, { headers: headers(apiKey) }));
      expect(reply.status).toBe(200);
      expect(keyChecks(reply.reads)).toBe(1);
      // Authentication and the subscription (whose view carries its product family): no separate
      // read for the families or the serializers.
      expect(siteReads(reply.reads)).toBe(2);
    }
  });

  it('skips the key check within the TTL, gives the same body, and still refuses a wrong key', async () => {
    const uncached = createHttpApp({ engine, rateLimit: false, apiKeyCacheTtlMs: 0 });
    const cachedApp = createHttpApp({ engine, rateLimit: false, apiKeyCacheTtlMs: 60_000 });
    const expected = await counted(() =>
      uncached.request(`http://acme.localhost${path}`, { headers: headers(apiKey) }),
    );
    const first = await counted(() => cachedApp.request(`http://acme.localhost${path}`, { headers: headers(apiKey) }));
    const second = await counted(() => cachedApp.request(`http://acme.localhost${path}`, { headers: headers(apiKey) }));
    expect(first.status).toBe(200);
    expect(keyChecks(first.reads)).toBe(1);
    expect(second.status).toBe(200);
    expect(keyChecks(second.reads)).toBe(0);
    // One read transaction: the subscription's.
    expect(siteReads(second.reads)).toBe(1);
    expect(second.body).toBe(expected.body);
    expect(first.body).toBe(expected.body);
    // The site's zone reaches the body from the cached record.
    expect(JSON.parse(second.body).subscription.created_at).toMatch(/\+01:00$/);

    const wrong = await counted(() =>
      cachedApp.request(`http://acme.localhost${path}`, { headers: headers(`${apiKey}x`) }),
    );
    expect(wrong.status).toBe(401);
    expect(keyChecks(wrong.reads)).toBe(1);
    const elsewhere = await cachedApp.request(`http://globex.localhost${path}`, {
      headers: { ...headers(apiKey), host: 'globex.localhost' },
    });
    expect(elsewhere.status).toBe(401);
  });

  it('refuses a revoked key on the next request when the cache is off', async () => {
    const app = createHttpApp({ engine, rateLimit: false, apiKeyCacheTtlMs: 0 });
    const extra = await engine.sites.createApiKey('acme', 'short-lived');
    expect((await app.request(`http://acme.localhost${path}`, { headers: headers(extra.key) })).status).toBe(200);
    await engine.sites.revokeApiKey('acme', extra.id);
    expect((await app.request(`http://acme.localhost${path}`, { headers: headers(extra.key) })).status).toBe(401);
  });
});
