/**
 * What the HTTP edge refuses, and why (README "Security"): invalid text anywhere in a request
 * (a NUL was a 500 on Postgres, after a signup had charged the card), JSON nested past the limit
 * (a stack overflow), portal links signed for whatever `Host` a client sent, JSON writes typed as
 * something a cross-site form can send, unthrottled guessing from one address, and an unsigned
 * portal flash cookie. The invalid-text cases run on Postgres (BILLING_TEST_POSTGRES_URL, else
 * PGlite), where it mattered; the rest on the memory storage.
 */
import { createBillingEngine, createPortalLink } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { hostedPageToken } from 'billing-engine/chargify';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { addressKey } from '../../examples/http/address-limits.js';
import { createHttpApp } from '../../examples/http/create-http-app.js';
import { flashCookie, readFlash } from '../../examples/http/hosted/portal-flash.js';
import { BROWSER_FORM_MESSAGE, isJsonContentType, JSON_REQUIRED_MESSAGE } from '../../examples/http/request-guards.js';
import { PORTAL_ORIGIN_MISSING_MESSAGE } from '../../examples/http/routes/portal-link-routes.js';
import { portalOrigin, sitePortalOrigin } from '../../src/portal-link.js';
import {
  INVALID_TEXT_MESSAGE,
  isStorablePercentEncoded,
  isStorableText,
  jsonNestedDeeperThan,
  readJsonRequestBody,
} from '../../src/wire/request-text.js';
import { closePostgresTestServer } from '../support/postgres.js';
import { basic, type HttpReply } from './support/client.js';
import { type HostedFixture, useHostedFixture } from './support/hosted-fixture.js';
import { type HttpFixture, START, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

afterAll(closePostgresTestServer);

const JSON_TYPE = 'application/json; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';
const RATE_LIMITED = /^Your request was denied due to a usage violation\./;
const TOO_DEEP = 'Body: is nested more than 32 levels deep.';

function expectErrors(reply: HttpReply, status: number, messages: string[]): void {
  expect(reply.status, reply.text.slice(0, 300)).toBe(status);
  expect(reply.headers['content-type']).toBe(JSON_TYPE);
  expect(reply.json()).toEqual({ errors: messages });
}

function expectPage(reply: HttpReply, status: number): void {
  expect(reply.status, reply.text.slice(0, 300)).toBe(status);
  expect(reply.headers['content-type']).toBe(HTML_TYPE);
}

/** Every table of the engine's Postgres schema with its row count, read through the test's own connection. */
async function rowCounts(f: HttpFixture): Promise<Record<string, number>> {
  const pg = f.postgres;
  if (pg === undefined) throw new Error('postgres fixture expected');
  const tables = await pg.query<{ name: string }>(
    `select table_name as name from information_schema.tables where table_schema = $1 and table_type = 'BASE TABLE'`,
    [pg.schema],
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const [row] = await pg.query<{ n: number }>(`select count(*)::int as n from "${pg.schema}"."${name}"`);
    counts[name] = row?.n ?? -1;
  }
  return counts;
}

/** A raw JSON body (so that a test can send text JSON.stringify cannot write, or would overflow on). */
function jsonText(f: HttpFixture, method: string, path: string, body: string | Buffer, site: 'acme' = 'acme') {
  return f.as(site, { method, path, body, headers: { 'content-type': 'application/json' } });
}

describe('invalid text (NUL, lone surrogates, non-UTF-8) is a 422 at the wire boundary, on Postgres', () => {
  const http = useHttpFixture({ storage: 'postgres' });

  it('refuses a NUL in a signup before the card is charged; nothing is left behind, so the same signup then works', async () => {
    const f = http();
    await seedCatalog(f.engine);
    const before = await rowCounts(f);
    const body = signupBody() as { subscription: { customer_attributes: Record<string, unknown> } };
    body.subscription.customer_attributes.first_name = 'Ada\u0000';
    const reply = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: body });
    expectErrors(reply, 422, [INVALID_TEXT_MESSAGE]);
    expect(f.gateway.calls).toEqual([]);
    expect(await rowCounts(f)).toEqual(before);
    expect(f.logged).toEqual([]);
    // Was a 500 after the charge, and then a 409 "signup in progress" for the same customer reference.
    const clean = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    expect(clean.status, clean.text).toBe(201);
  });

  it('refuses lone surrogates, high or low, and NUL or a surrogate in an object key', async () => {
    const f = http();
    const before = await rowCounts(f);
    const customer = { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' };
    for (const body of [
      { customer: { ...customer, last_name: 'Love\uD800lace' } },
      { customer: { ...customer, organization: '\uDC00' } },
      { customer: { ...customer, 'note\u0000': 'x' } },
      { customer: { ...customer, '\uDBFF': 'x' } },
      { customer: { ...customer, tags: [['deep', { inner: 'a\u0000b' }]] } },
    ]) {
      const reply = await f.as('acme', { method: 'POST', path: '/customers.json', json: body });
      expectErrors(reply, 422, [INVALID_TEXT_MESSAGE]);
    }
    // Escaped in the JSON text as well: the same values, written as \u escapes by hand.
    const escaped = await jsonText(
      f,
      'POST',
      '/customers.json',
      '{"customer":{"first_name":"A\\u0000","last_name":"L","email":"a@b.co"}}',
    );
    expectErrors(escaped, 422, [INVALID_TEXT_MESSAGE]);
    // A paired surrogate (an emoji) is fine.
    const emoji = await f.as('acme', {
      method: 'POST',
      path: '/customers.json',
      json: { customer: { ...customer, first_name: 'Ada 🦄' } },
    });
    expect(emoji.status, emoji.text).toBe(201);
    const after = await rowCounts(f);
    expect(after.customers).toBe((before.customers ?? 0) + 1);
    expect(f.logged).toEqual([]);
  });

  it('refuses a body whose bytes are not UTF-8 (latin-1, a surrogate encoded in 3 bytes)', async () => {
    const f = http();
    for (const bytes of [
      Buffer.from('{"customer":{"first_name":"Jos\xe9","last_name":"L","email":"a@b.co"}}', 'latin1'),
      Buffer.concat([
        Buffer.from('{"customer":{"first_name":"'),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from('","last_name":"L","email":"a@b.co"}}'),
      ]),
    ]) {
      expectErrors(await jsonText(f, 'POST', '/customers.json', bytes), 422, [INVALID_TEXT_MESSAGE]);
    }
    expect(await f.engine.site('acme').customers.list()).toEqual([]);
  });

  it('refuses %00 in the path or the query of reads and writes with 422, never a 500', async () => {
    const f = http();
    await seedCatalog(f.engine);
    for (const path of [
      '/products/handle/a%00b.json',
      '/coupons/find.json?code=a%00b',
      '/referral_codes/validate.json?code=%00',
      '/product_families/handle:a%00.json',
      '/customers/lookup.json?reference=x%00',
      '/subscriptions.json?state=active%00',
      '/product_families.json?%00=1',
    ]) {
      expectErrors(await f.as('acme', { path }), 422, [INVALID_TEXT_MESSAGE]);
    }
    const write = await f.as('acme', {
      method: 'POST',
      path: '/product_families.json?x=%00',
      json: { product_family: { name: 'Fine' } },
    });
    expectErrors(write, 422, [INVALID_TEXT_MESSAGE]);
    expect(await f.engine.site('acme').catalog.listFamilies()).toHaveLength(1);
    expect(f.logged).toEqual([]);
  });

  it('hosted pages: a NUL in a card form or a portal form is a 422 page that changes nothing; in the URL a 404 page', async () => {
    const f = http();
    await seedCatalog(f.engine);
    const view = await f.engine.site('acme').subscriptions.create({
      productHandle: 'pro',
      customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
      creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
    });
    const id = view.subscription.id;
    const { sharedKey } = await f.engine.site('acme').info();
    const cardPath = `/update_payment/${id}/${hostedPageToken('update_payment', id, sharedKey)}`;
    const page = (path: string, body?: string | Buffer) =>
      f.raw({
        method: body === undefined ? 'GET' : 'POST',
        path,
        headers: {
          host: `acme.localhost:${f.port}`,
          accept: 'text/html',
          ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        ...(body === undefined ? {} : { body }),
      });
    const card = 'full_number=4242424242424242&expiration_month=10&expiration_year=2031';
    expectPage(await page(cardPath, `first_name=Grace%00&last_name=Hopper&${card}`), 422);
    expectPage(
      await page(
        cardPath,
        Buffer.concat([Buffer.from('first_name='), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(`&${card}`)]),
      ),
      422,
    );
    expectPage(await page(`/update_payment/${id}%00/${hostedPageToken('update_payment', id, sharedKey)}`), 404);
    const portal = createPortalLink({ customerId: view.customer.id, sharedKey, now: f.clock.now() }).path;
    expectPage(await page(`${portal}/cancel`, `subscription_id=${id}&reason=bye%00`), 422);
    const after = await f.engine.site('acme').subscriptions.get(id);
    expect(after.paymentProfile?.lastFour).toBe('1111');
    expect(after.subscription.cancelAtEndOfPeriod).toBe(false);
    expect(f.logged).toEqual([]);
    // The same forms without the NUL work.
    expectPage(await page(cardPath, `first_name=Grace&last_name=Hopper&${card}`), 200);
    expect((await page(`${portal}/cancel`, `subscription_id=${id}&reason=bye`)).status).toBe(303);
  });
});

describe('invalid text: the checks themselves', () => {
  it('tells storable text from text with a NUL or a lone surrogate, in values, keys and URLs', () => {
    expect(isStorableText('plain é 🦄')).toBe(true);
    for (const text of ['\u0000', 'a\u0000', '\uD800', '\uDFFF', 'a\uD800b', '\uDC00\uD800']) {
      expect(isStorableText(text), JSON.stringify(text)).toBe(false);
    }
    expect(isStorablePercentEncoded('/a/b.json?c=d%20e&f=%E2%82%AC')).toBe(true);
    expect(isStorablePercentEncoded('/a/%zz/%E0%A4%A.json')).toBe(true);
    expect(isStorablePercentEncoded('/a/b%00.json')).toBe(false);
    expect(isStorablePercentEncoded('/a.json?x=%00')).toBe(false);
    expect(readJsonRequestBody('{"a":["\\u0000"]}')).toMatchObject({ ok: false, refusal: 'text' });
    expect(readJsonRequestBody('{"\\ud800":1}')).toMatchObject({ ok: false, refusal: 'text' });
    expect(readJsonRequestBody('{"a":"\\ud83e\\udd84"}')).toEqual({ ok: true, value: { a: '🦄' } });
    expect(readJsonRequestBody(new Uint8Array([0x7b, 0xff, 0x7d]))).toMatchObject({ ok: false, refusal: 'text' });
    expect(readJsonRequestBody('{"a":')).toMatchObject({ ok: false, refusal: 'syntax' });
    expect(readJsonRequestBody('  ')).toEqual({ ok: true, value: undefined });
  });
});

describe('JSON nesting depth is capped at 32', () => {
  const http = useHttpFixture();

  it('answers 5,000-deep JSON to /api/v2/signups and /subscriptions.json with 422, not a 500, charging nothing', async () => {
    const f = http();
    await seedCatalog(f.engine);
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    for (const path of ['/api/v2/signups', '/api/v2/signups.json']) {
      const reply = await f.raw({
        method: 'POST',
        path,
        headers: { host: `api.localhost:${f.port}`, 'content-type': 'application/json' },
        body: `{"signup":{"product":{"handle":"pro"},"x":${deep}}}`,
      });
      expectErrors(reply, 422, [TOO_DEEP]);
    }
    const objects = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    expectErrors(await jsonText(f, 'POST', '/subscriptions.json', `{"subscription":${objects}}`), 422, [TOO_DEEP]);
    expect(f.gateway.calls).toEqual([]);
    expect(f.logged).toEqual([]);
  });

  it('reads a body 32 levels deep and refuses one 33 levels deep, creating nothing', async () => {
    const f = http();
    // The top object and `customer` are two levels: 30 arrays make 32, 31 make 33.
    const body = (arrays: number) =>
      `{"customer":{"first_name":"A","last_name":"B","email":"a@b.co","x":${'['.repeat(arrays)}${']'.repeat(arrays)}}}`;
    expectErrors(await jsonText(f, 'POST', '/customers.json', body(31)), 422, [TOO_DEEP]);
    expect(await f.engine.site('acme').customers.list()).toEqual([]);
    const ok = await jsonText(f, 'POST', '/customers.json', body(30));
    expect(ok.status, ok.text).toBe(201);
  });

  it('counts brackets outside strings only', async () => {
    const f = http();
    const organization = `${'['.repeat(100)}{"\\"${'{'.repeat(100)}`;
    const reply = await jsonText(
      f,
      'POST',
      '/customers.json',
      `{"customer":{"first_name":"A","last_name":"B","email":"a@b.co","organization":${JSON.stringify(organization)}}}`,
    );
    expect(reply.status, reply.text).toBe(201);
    expect(jsonNestedDeeperThan('[[["\\"]]]]]]"]]]', 3)).toBe(false);
    expect(jsonNestedDeeperThan('[[[["x"]]]]', 3)).toBe(true);
  });
});

describe('portal links are signed only for the configured public origin', () => {
  const http = useHttpFixture({ portalLinks: { baseDomain: 'billing.example.com' } });

  it('uses https://{site}.{baseDomain}, whatever Host the request names', async () => {
    const f = http();
    const customer = await f.engine.site('acme').customers.create({ firstName: 'A', lastName: 'B', email: 'a@b.co' });
    const path = `/portal/customers/${customer.id}/management_link.json`;
    for (const host of ['acme.evil.example', 'ACME.attacker.test:8080', `acme.localhost:${f.port}`]) {
      const reply = await f.as('acme', { path, host });
      expect(reply.status, reply.text).toBe(200);
      const url = new URL(reply.json<{ url: string }>().url);
      expect(url.origin, host).toBe('https://acme.billing.example.com');
      expect(url.pathname).toMatch(new RegExp(`^/portal/${customer.id}/\\d+/[0-9a-f]{32}$`));
    }
  });
});

describe('portal links: the baseUrl option', () => {
  const http = useHttpFixture({ portalLinks: { baseUrl: (subdomain) => `https://${subdomain}-billing.example.net/` } });

  it('is used as the origin for the site', async () => {
    const f = http();
    const customer = await f.engine.site('acme').customers.create({ firstName: 'A', lastName: 'B', email: 'a@b.co' });
    const reply = await f.as('acme', {
      path: `/portal/customers/${customer.id}/management_link.json`,
      host: 'acme.evil.example',
    });
    expect(reply.json<{ url: string }>().url).toMatch(
      /^https:\/\/acme-billing\.example\.net\/portal\/\d+\/\d+\/[0-9a-f]{32}$/,
    );
  });
});

describe('portal links without a configured origin', () => {
  it('answers 501 rather than sign a link for the request’s Host; a bad base domain fails at startup', async () => {
    const engine = createBillingEngine({ storage: createMemoryStorage() });
    await engine.migrate();
    const { apiKey } = await engine.sites.create({ subdomain: 'acme', currency: 'USD' });
    const customer = await engine.site('acme').customers.create({ firstName: 'A', lastName: 'B', email: 'a@b.co' });
    const app = createHttpApp({ engine });
    const reply = await app.request(`/portal/customers/${customer.id}/management_link.json`, {
      headers: { host: 'acme.evil.example', authorization: basic(apiKey) },
    });
    expect(reply.status).toBe(501);
    expect(await reply.json()).toEqual({ errors: [PORTAL_ORIGIN_MISSING_MESSAGE] });
    for (const baseDomain of ['example.com/path', 'ftp://example.com', 'https://user@example.com', '']) {
      expect(() => createHttpApp({ engine, portalLinks: { baseDomain } }), baseDomain).toThrow(RangeError);
    }
    await engine.close();
  });

  it('checks origins: scheme, host and port only', () => {
    expect(sitePortalOrigin('acme', 'example.com')).toBe('https://acme.example.com');
    expect(sitePortalOrigin('acme', 'http://localhost:3000')).toBe('http://acme.localhost:3000');
    expect(portalOrigin('https://x.example.com/')).toBe('https://x.example.com');
    for (const bad of ['https://x.example.com/a', 'https://x.example.com?q', 'javascript:alert(1)', 'x.example.com']) {
      expect(() => portalOrigin(bad), bad).toThrow(RangeError);
    }
    expect(() => sitePortalOrigin('evil.com/', 'example.com')).toThrow(RangeError);
  });
});

describe('JSON writes must be typed as JSON', () => {
  const http = useHttpFixture();
  const family = JSON.stringify({ product_family: { name: 'Plans' } });

  it('refuses a body typed as text, a form, multipart, another charset or nothing with 415, creating nothing', async () => {
    const f = http();
    for (const type of [
      'text/plain',
      'text/plain; charset=utf-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=iso-8859-1',
      'text/json',
      'application/jsonx',
      '',
      null,
    ]) {
      const reply = await f.as('acme', {
        method: 'POST',
        path: '/product_families.json',
        body: family,
        headers: type === null ? {} : { 'content-type': type },
      });
      expectErrors(reply, 415, [JSON_REQUIRED_MESSAGE]);
    }
    const chunked = await f.as('acme', {
      method: 'PUT',
      path: '/product_families/1.json',
      body: family,
      headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
    });
    expectErrors(chunked, 415, [JSON_REQUIRED_MESSAGE]);
    expect(await f.engine.site('acme').catalog.listFamilies()).toEqual([]);
  });

  it('takes application/json with or without a UTF-8 charset, in any case, and +json types', async () => {
    const f = http();
    const types = [
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON; Charset="UTF-8"',
      'application/vnd.api+json',
    ];
    for (const [i, type] of types.entries()) {
      const reply = await f.as('acme', {
        method: 'POST',
        path: '/product_families.json',
        body: JSON.stringify({ product_family: { name: `Plans ${i}` } }),
        headers: { 'content-type': type },
      });
      expect(reply.status, `${type}: ${reply.text}`).toBe(201);
    }
    expect(isJsonContentType('application/problem+json; charset=utf8')).toBe(true);
    expect(isJsonContentType('application/json; charset=utf-16')).toBe(false);
  });

  it('lets writes with no body through, with any content type or none (DELETE, POST, PUT with nothing)', async () => {
    const f = http();
    await seedCatalog(f.engine);
    const created = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    const id = created.json<{ subscription: { id: number } }>().subscription.id;
    const later = await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/delayed_cancel.json` });
    expect(later.status, later.text).toBe(200);
    const undo = await f.as('acme', {
      method: 'DELETE',
      path: `/subscriptions/${id}/delayed_cancel.json`,
      body: '',
      headers: { 'content-type': 'text/plain', 'content-length': '0' },
    });
    expect(undo.status, undo.text).toBe(200);
    const cancel = await f.as('acme', { method: 'DELETE', path: `/subscriptions/${id}.json` });
    expect(cancel.status, cancel.text).toBe(200);
    const reactivate = await f.as('acme', {
      method: 'PUT',
      path: `/subscriptions/${id}/reactivate.json`,
      body: '',
      headers: { 'transfer-encoding': 'chunked' },
    });
    expect(reactivate.status, reactivate.text).toBe(200);
  });

  it('refuses a bodiless write that a browser page sent (an Origin header) with 403, changing nothing', async () => {
    const f = http();
    await seedCatalog(f.engine);
    const created = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    const id = created.json<{ subscription: { id: number } }>().subscription.id;
    // What `<form method="post" action="https://acme.../subscriptions/1/delayed_cancel.json">` sends.
    const reply = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${id}/delayed_cancel.json`,
      body: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
    });
    expectErrors(reply, 403, [BROWSER_FORM_MESSAGE]);
    const view = await f.engine.site('acme').subscriptions.get(id);
    expect(view.subscription.cancelAtEndOfPeriod).toBe(false);
  });
});

let now = 0;
beforeEach(() => {
  now = 0;
});

describe('rate limits by client address', () => {
  const http = useHttpFixture({
    rateLimit: false,
    addressRateLimit: {
      failures: { capacity: 3, refillPerSecond: 1, now: () => now },
      hostedPages: { capacity: 1000, refillPerSecond: 1, now: () => now },
    },
  });
  const list = (key?: string | null) =>
    http().as('acme', { path: '/product_families.json', ...(key === undefined ? {} : { key }) });

  it('many wrong keys from one address: 429 with Retry-After; then even the right key waits until a token is back', async () => {
    for (let i = 0; i < 3; i++) expect((await list('wrong')).status).toBe(401);
    const limited = await list('wrong');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.headers['content-type']).toBe(JSON_TYPE);
    expect(limited.json<{ errors: string[] }>().errors[0]).toMatch(RATE_LIMITED);
    // Blocked: the key is not even looked at, so a right guess would not show.
    expect((await list()).status).toBe(429);
    now += 1000;
    expect((await list()).status).toBe(200);
    expect((await list('wrong')).status).toBe(401);
    expect((await list('wrong')).status).toBe(429);
  });

  it('counts a missing key, an unknown site and another site’s key; never a request that authenticates', async () => {
    const f = http();
    for (let i = 0; i < 20; i++) expect((await list()).status).toBe(200);
    expect((await list(null)).status).toBe(401);
    expect(
      (await f.as('acme', { path: '/product_families.json', host: `nosuchsite.localhost:${f.port}` })).status,
    ).toBe(401);
    expect((await list(f.keys.globex)).status).toBe(401);
    // Those three spent the bucket: the next failure is refused, and so is everything after it.
    expect((await list(null)).status).toBe(429);
    expect((await list()).status).toBe(429);
  });

  it('hosted-page token guesses count against the same address, and get a 429 page', async () => {
    const f = http();
    await seedCatalog(f.engine);
    const view = await f.engine.site('acme').subscriptions.create({
      productHandle: 'pro',
      customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
      creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
    });
    const id = view.subscription.id;
    const token = hostedPageToken('update_payment', id, (await f.engine.site('acme').info()).sharedKey);
    const page = (path: string) => f.raw({ path, headers: { host: `acme.localhost:${f.port}`, accept: 'text/html' } });
    expect((await list('wrong')).status).toBe(401);
    expectPage(await page(`/update_payment/${id}/0000000000`), 404);
    expectPage(await page(`/portal/${view.customer.id}/9999999999/${'0'.repeat(32)}`), 404);
    const limited = await page(`/update_payment/${id}/1111111111`);
    expectPage(limited, 429);
    expect(limited.headers['retry-after']).toBe('1');
    // The genuine page waits too, and so does the API with the right key.
    expectPage(await page(`/update_payment/${id}/${token}`), 429);
    expect((await list()).status).toBe(429);
    now += 1000;
    expectPage(await page(`/update_payment/${id}/${token}`), 200);
  });
});

describe('rate limits by client address: one bucket per address', () => {
  const http = useHttpFixture({
    rateLimit: false,
    addressRateLimit: {
      failures: { capacity: 2, refillPerSecond: 1, now: () => now },
      hostedPages: { capacity: 2, refillPerSecond: 1, now: () => now },
      // A deployment behind a proxy reads the address the proxy sets; here a test header stands for it.
      clientAddress: (c) => c.req.header('x-test-client') ?? 'none',
    },
  });
  const from = (client: string, key = 'wrong') =>
    http().as('acme', { path: '/product_families.json', key, headers: { 'x-test-client': client } });

  it('an address that spent its failures does not block another', async () => {
    for (let i = 0; i < 2; i++) expect((await from('198.51.100.7')).status).toBe(401);
    expect((await from('198.51.100.7')).status).toBe(429);
    expect((await from('198.51.100.8')).status).toBe(401);
    expect((await from('198.51.100.8', http().keys.acme)).status).toBe(200);
    // One IPv6 host holds a whole /64: its addresses share a bucket.
    for (let i = 0; i < 2; i++) expect((await from(`2001:db8:1:2::${i + 1}`)).status).toBe(401);
    expect((await from('2001:db8:1:2:ffff::9')).status).toBe(429);
    expect((await from('2001:db8:1:3::1')).status).toBe(401);
  });

  it('limits hosted-page requests per address, even with a good link', async () => {
    const f = http();
    const customer = await f.engine.site('acme').customers.create({ firstName: 'A', lastName: 'B', email: 'a@b.co' });
    const { sharedKey } = await f.engine.site('acme').info();
    const portal = createPortalLink({ customerId: customer.id, sharedKey, now: f.clock.now() }).path;
    const page = (client: string) =>
      f.raw({
        path: portal,
        headers: { host: `acme.localhost:${f.port}`, accept: 'text/html', 'x-test-client': client },
      });
    expectPage(await page('a'), 200);
    expectPage(await page('a'), 200);
    const limited = await page('a');
    expectPage(limited, 429);
    expect(limited.headers['retry-after']).toBe('1');
    expectPage(await page('b'), 200);
  });

  it('keys addresses by IPv4, or by the /64 of an IPv6 address', () => {
    expect(addressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressKey('unknown')).toBe('unknown');
  });
});

describe('rate limits by client address: defaults', () => {
  const on = useHttpFixture();

  it('are on by default: 100 failed authentications from one address at once, then 429', async () => {
    const f = on();
    for (let i = 0; i < 100; i++) {
      const reply = await f.as('acme', { path: '/product_families.json', key: `wrong-${i}` });
      expect(reply.status).toBe(401);
    }
    // One token a second comes back (real clock here), so a slow machine may see a few more 401s first.
    let limited: HttpReply | undefined;
    for (let i = 0; i < 100 && limited === undefined; i++) {
      const reply = await f.as('acme', { path: '/product_families.json', key: `again-${i}` });
      if (reply.status === 429) limited = reply;
      else expect(reply.status).toBe(401);
    }
    expect(limited?.json<{ errors: string[] }>().errors[0]).toMatch(RATE_LIMITED);
    expect(Number(limited?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('rate limits by client address: off with rateLimit false', () => {
  const off = useHttpFixture({ rateLimit: false });

  it('never answers 429 to failed authentications', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < 120; i++)
      statuses.add((await off().as('acme', { path: '/product_families.json', key: 'x' })).status);
    expect([...statuses]).toEqual([401]);
  });
});

describe('portal flash cookie is signed', () => {
  const SECRET = 'a-flash-secret-of-at-least-thirty-two-bytes';
  const fixture = useHostedFixture({ hosted: { flashSecret: SECRET } });

  async function portalBase(f: HostedFixture, customerId: number): Promise<string> {
    const reply = await f.api('acme', `/portal/customers/${customerId}/management_link.json`);
    return new URL(reply.json<{ url: string }>().url).pathname;
  }

  const notice = (reply: HttpReply) => /role="status"/.test(reply.text);

  it('shows a flash it signed, once; a forged, altered, moved, foreign or stale one shows nothing', async () => {
    const f = fixture();
    const mine = await f.subscribe('acme', 'pro', 'ada@example.com');
    const theirs = await f.subscribe('acme', 'pro', 'bob@example.com');
    const base = await portalBase(f, mine.customer.id);
    const otherBase = await portalBase(f, theirs.customer.id);
    const post = await f.page('acme', `${base}/cancel`, { form: { subscription_id: String(mine.subscription.id) } });
    expect(post.status).toBe(303);
    const cookie = (post.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
    const value = cookie.slice('portal_flash='.length);
    expect(value).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    const genuine = await f.page('acme', base, { cookie });
    expect(notice(genuine)).toBe(true);
    expect(genuine.text).toContain('Your subscription will be cancelled at the end of the current period');

    const [payload = '', mac = ''] = value.split('.');
    const forgedPayload = Buffer.from(
      JSON.stringify({ kind: 'notice', messages: ['Call +1 555 0100 to confirm your card'], expires: 9_999_999_999 }),
    ).toString('base64url');
    const attempts = [
      forgedPayload,
      `${forgedPayload}.${mac}`,
      `${payload}x.${mac}`,
      `${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      flashCookie(
        { kind: 'notice', messages: ['Call us'] },
        base,
        false,
        'another-secret-of-thirty-two-bytes!!',
        f.clock.now(),
      )
        .split(';')[0]
        ?.slice('portal_flash='.length),
    ];
    for (const attempt of attempts) {
      const shown = await f.page('acme', base, { cookie: `portal_flash=${attempt}` });
      expectPage(shown, 200);
      expect(notice(shown), attempt).toBe(false);
      expect(shown.text).not.toContain('Call');
    }
    // Genuine, but made for another customer's link, or past its minute.
    expect(notice(await f.page('acme', otherBase, { cookie }))).toBe(false);
    f.clock.set(new Date(START).getTime() + 61_000);
    expect(notice(await f.page('acme', base, { cookie }))).toBe(false);
  });

  it('signs with the configured secret or a random one per app instance, never accepts a short one', () => {
    const at = new Date(START);
    const value = (
      flashCookie({ kind: 'error', messages: ['No'] }, '/portal/1/2/x', true, SECRET, at).split(';')[0] ?? ''
    ).slice('portal_flash='.length);
    expect(readFlash(value, '/portal/1/2/x', SECRET, at)).toEqual({ kind: 'error', messages: ['No'] });
    expect(readFlash(value, '/portal/1/2/y', SECRET, at)).toBeUndefined();
    expect(readFlash(value, '/portal/1/2/x', `${SECRET}!`, at)).toBeUndefined();
    expect(readFlash(value, '/portal/1/2/x', SECRET, new Date(at.getTime() + 60_000))).toBeUndefined();
    const engine = createBillingEngine({ storage: createMemoryStorage() });
    expect(() => createHttpApp({ engine, hosted: { flashSecret: 'short' } })).toThrow(RangeError);
  });
});

describe('portal flash cookie: a random secret per app instance', () => {
  it('is not readable by another instance', async () => {
    const engine = createBillingEngine({ storage: createMemoryStorage() });
    await engine.migrate();
    await engine.sites.create({ subdomain: 'acme', currency: 'USD' });
    const customer = await engine.site('acme').customers.create({ firstName: 'A', lastName: 'B', email: 'a@b.co' });
    const family = await engine.site('acme').catalog.createFamily({ name: 'F' });
    await engine.site('acme').catalog.createProduct(family.id, {
      name: 'Pro',
      handle: 'pro',
      priceInCents: 1000,
      interval: 1,
      intervalUnit: 'month',
    });
    const view = await engine.site('acme').subscriptions.create({
      productHandle: 'pro',
      customerId: customer.id,
      creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
    });
    const { sharedKey } = await engine.site('acme').info();
    const base = createPortalLink({ customerId: customer.id, sharedKey, now: engine.clock.now() }).path;
    const [first, second] = [createHttpApp({ engine }), createHttpApp({ engine })];
    const headers = { host: 'acme.localhost', 'content-type': 'application/x-www-form-urlencoded' };
    const post = await first.request(`${base}/cancel`, {
      method: 'POST',
      headers,
      body: `subscription_id=${view.subscription.id}`,
    });
    expect(post.status).toBe(303);
    const cookie = (post.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const read = async (app: typeof first) =>
      (await (await app.request(base, { headers: { host: 'acme.localhost', cookie } })).text()).includes(
        'role="status"',
      );
    expect(await read(first)).toBe(true);
    expect(await read(second)).toBe(false);
    await engine.close();
  });
});
