/**
 * The direct-post interface over HTTP against its abuse: the body cap, the per-address and
 * per-`api_id` rate limits of `registerDirectRoutes`, unsigned fields beside a signed product,
 * and text no database can store (a NUL), on Postgres, where it used to be a bare 500.
 */
import {
  BillingError,
  createBillingEngine,
  createTestGateway,
  type IssuedDirectCredentials,
  ManualClock,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { serializeError } from 'billing-engine/chargify';
import { Hono } from 'hono';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type HttpAppEnv, HttpProblem, sendError, sendProblem } from '../../examples/http/http-context.js';
import {
  DEFAULT_DIRECT_BODY_LIMIT_BYTES,
  type DirectRoutesOptions,
  registerDirectRoutes,
} from '../../examples/http/routes/direct-routes.js';
import { buildSecureFields, verifyDirectRedirect } from '../../src/direct-post-helpers.js';
import type { FormInput } from '../../src/domain/signing/index.js';
import { closePostgresTestServer } from '../support/postgres.js';
import { basic, type HttpReply } from './support/client.js';
import { type HttpFixture, START, seedCatalog, useHttpFixture } from './support/http-fixture.js';

const RETURN = 'https://merchant.example/return';
const FORM_TYPE = 'application/x-www-form-urlencoded';
/** The default cap of a direct post's body: 16 KiB. */
const LIMIT = 16 * 1024;

const SIGNUP_FIELDS: readonly [string, string][] = [
  ['signup[customer][first_name]', 'Ada'],
  ['signup[customer][last_name]', 'Lovelace'],
  ['signup[customer][email]', 'ada@example.com'],
  ['signup[payment_profile][card_number]', '4111111111111111'],
  ['signup[payment_profile][expiration_month]', '12'],
  ['signup[payment_profile][expiration_year]', '2030'],
];

/** A browser's signup form: the merchant's signed fields, then what the page (or its user) adds. */
function signupForm(
  creds: Pick<IssuedDirectCredentials, 'apiId' | 'apiSecret'>,
  now: Date,
  extra: readonly [string, string][] = [],
  data: FormInput = { signup: { product: { handle: 'pro' } } },
): string {
  const secure = buildSecureFields({ apiId: creds.apiId, apiSecret: creds.apiSecret, data, redirectUri: RETURN, now });
  return new URLSearchParams([...Object.entries(secure.fields), ...SIGNUP_FIELDS, ...extra]).toString();
}

function post(f: HttpFixture, text: string, headers: Record<string, string> = {}): Promise<HttpReply> {
  return f.raw({
    method: 'POST',
    path: '/api/v2/signups',
    headers: { host: `api.localhost:${f.port}`, 'content-type': FORM_TYPE, ...headers },
    body: text,
  });
}

function location(reply: HttpReply): URL {
  expect(reply.status, reply.text).toBe(303);
  return new URL(String(reply.headers.location));
}

describe('direct post over HTTP: body cap and unsigned fields', () => {
  const fixture = useHttpFixture();

  it("caps a direct post at 16 KiB with a 413 in the service's style, and still serves a form just under it", async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const acme = await f.engine.sites.rotateDirectCredentials('acme');
    const base = signupForm(acme, f.clock.now());
    const over = `${base}&pad=${'p'.repeat(LIMIT - base.length)}`;
    expect(over.length).toBe(LIMIT + 5);
    const refused = await post(f, over);
    expect(refused.status).toBe(413);
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(refused.json()).toEqual({ errors: ['Body: is larger than the limit of 16384 bytes.'] });
    // A JSON signup is held to the same cap.
    const json = await f.raw({
      method: 'POST',
      path: '/api/v2/signups.json',
      headers: {
        host: `api.localhost:${f.port}`,
        'content-type': 'application/json',
        authorization: basic(acme.apiId, acme.apiPassword),
      },
      body: JSON.stringify({
        signup: { product: { handle: 'pro' } },
        pad: 'p'.repeat(LIMIT),
      }),
    });
    expect(json.status).toBe(413);
    expect(await f.engine.site('acme').subscriptions.list()).toHaveLength(0);
    // A top-level field is never read by a signup, so a padded form just under the cap goes through.
    const fresh = signupForm(acme, f.clock.now());
    const under = `${fresh}&pad=${'p'.repeat(LIMIT - fresh.length - 5)}`;
    expect(under.length).toBe(LIMIT);
    const accepted = verifyDirectRedirect(location(await post(f, under)), acme);
    expect(accepted).toMatchObject({ ok: true, resultCode: '2000' });
    expect(await f.engine.site('acme').subscriptions.list()).toHaveLength(1);
    expect(DEFAULT_DIRECT_BODY_LIMIT_BYTES).toBe(16 * 1024);
  });

  it('answers a cheaper product id added beside the signed handle with a signed 4220, and bills nothing', async () => {
    const f = fixture();
    const { familyId, productId: proId } = await seedCatalog(f.engine);
    await f.engine.site('acme').catalog.createProduct(familyId, {
      name: 'Gold',
      handle: 'gold',
      priceInCents: 50_000,
      interval: 1,
      intervalUnit: 'month',
    });
    const acme = await f.engine.sites.rotateDirectCredentials('acme');
    const reply = await post(
      f,
      signupForm(acme, f.clock.now(), [['signup[product][id]', String(proId)]], {
        signup: { product: { handle: 'gold' } },
      }),
    );
    const verified = verifyDirectRedirect(location(reply), acme);
    expect(verified).toMatchObject({ ok: true, success: false, statusCode: '422', resultCode: '4220' });
    const read = await f.raw({
      path: `/api/v2/calls/${verified.callId}`,
      headers: { host: `api.localhost:${f.port}`, authorization: basic(acme.apiId, acme.apiPassword) },
    });
    const errors = read.json<{ call: { response: { result: { errors: { attribute: string }[] } } } }>().call.response
      .result.errors;
    expect(errors.map((e) => e.attribute)).toEqual(['product.id']);
    expect(await f.engine.site('acme').subscriptions.list()).toHaveLength(0);
    expect(f.gateway.chargeCalls).toBe(0);
  });
});

describe('direct post over HTTP on Postgres: a NUL is a signed refusal, never a bare 500', () => {
  const fixture = useHttpFixture({ storage: 'postgres' });
  afterAll(closePostgresTestServer);

  it('answers a NUL in a customer field with a 4220 redirect and charges nothing', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const acme = await f.engine.sites.rotateDirectCredentials('acme');
    const text = signupForm(acme, f.clock.now(), [['signup[customer][organization]', 'Engines\u0000Ltd']]);
    expect(text).toContain('%00');
    const verified = verifyDirectRedirect(location(await post(f, text)), acme);
    expect(verified).toMatchObject({ ok: true, success: false, statusCode: '422', resultCode: '4220' });
    const read = await f.raw({
      path: `/api/v2/calls/${verified.callId}`,
      headers: { host: `api.localhost:${f.port}`, authorization: basic(acme.apiId, acme.apiPassword) },
    });
    expect(read.status).toBe(200);
    expect(await f.engine.site('acme').subscriptions.list()).toHaveLength(0);
    expect(await f.engine.site('acme').customers.list()).toHaveLength(0);
    expect(f.gateway.chargeCalls).toBe(0);
    // An api_id with a NUL names no credential: 401, no database error.
    const forged = signupForm({ apiId: `${acme.apiId}\u0000`, apiSecret: acme.apiSecret }, f.clock.now());
    expect((await post(f, forged)).status).toBe(401);
  });
});

describe('direct routes: rate limits per client address and per api_id', () => {
  let now = 0;
  let engine: ReturnType<typeof createBillingEngine>;
  let creds: IssuedDirectCredentials;
  const clock = new ManualClock(START);

  beforeEach(async () => {
    now = 0;
    engine = createBillingEngine({ storage: createMemoryStorage(), clock, gateway: createTestGateway() });
    await engine.migrate();
    creds = (await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' })).direct;
    await seedCatalog(engine);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await engine.close();
  });

  const app = (options: DirectRoutesOptions) => {
    const hono = new Hono<HttpAppEnv>();
    registerDirectRoutes(hono, engine.direct, {
      clientAddress: (c) => c.req.header('x-test-address') ?? 'nowhere',
      ...options,
    });
    // As the app answers the engine's refusals (an unknown api_id is `unauthorized`, with no call).
    hono.onError((error) => {
      if (error instanceof HttpProblem) return sendProblem(error);
      if (error instanceof BillingError) return sendError(serializeError(error));
      throw error;
    });
    return hono;
  };
  const send = (hono: Hono<HttpAppEnv>, address: string, text = signupForm(creds, clock.now())) =>
    hono.request('/api/v2/signups', {
      method: 'POST',
      headers: { 'content-type': FORM_TYPE, 'x-test-address': address },
      body: text,
    });
  const limits = { now: () => now };

  it('answers an address past its burst with 429 and Retry-After, before anything is recorded; others go on', async () => {
    const hono = app({
      rateLimit: { capacity: 2, refillPerSecond: 1, ...limits },
      apiIdRateLimit: { capacity: 100, refillPerSecond: 1, ...limits },
    });
    expect((await send(hono, 'a')).status).toBe(303);
    expect((await send(hono, 'a')).status).toBe(303);
    const limited = await send(hono, 'a');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(((await limited.json()) as { errors: string[] }).errors[0]).toMatch(
      /^Your request was denied due to a usage violation\./,
    );
    expect(await engine.site('acme').subscriptions.list()).toHaveLength(2);
    expect((await send(hono, 'b')).status).toBe(303);
    // Call reads count against the address too.
    const read = await hono.request('/api/v2/calls/x', {
      headers: { 'x-test-address': 'a', authorization: basic(creds.apiId, creds.apiPassword) },
    });
    expect(read.status).toBe(429);
    now += 1000;
    expect((await send(hono, 'a')).status).toBe(303);
  });

  it('limits one api_id across addresses, and an unknown api_id in its own bucket', async () => {
    const hono = app({
      rateLimit: { capacity: 100, refillPerSecond: 1, ...limits },
      apiIdRateLimit: { capacity: 3, refillPerSecond: 1, ...limits },
    });
    for (const address of ['a', 'b', 'c']) expect((await send(hono, address)).status).toBe(303);
    const limited = await send(hono, 'd');
    expect(limited.status).toBe(429);
    expect(await engine.site('acme').subscriptions.list()).toHaveLength(3);
    const stranger = signupForm({ apiId: 'nobody', apiSecret: 'x' }, clock.now());
    expect((await send(hono, 'd', stranger)).status).toBe(401);
    // A JSON signup is counted by its Basic user.
    const json = await hono.request('/api/v2/signups.json', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-test-address': 'e',
        authorization: basic(creds.apiId, creds.apiPassword),
      },
      body: '{}',
    });
    expect(json.status).toBe(429);
  });

  it('never limits with rateLimit false', async () => {
    const hono = app({ rateLimit: false });
    const stranger = signupForm({ apiId: 'nobody', apiSecret: 'x' }, clock.now());
    const statuses = new Set<number>();
    for (let i = 0; i < 400; i++) statuses.add((await send(hono, 'a', stranger)).status);
    expect([...statuses]).toEqual([401]);
  });

  it('limits by default, and only past 300 posts from one address at once', async () => {
    // The default buckets read performance.now: hold it still so that nothing refills.
    vi.spyOn(performance, 'now').mockReturnValue(1_000_000);
    const hono = app({});
    const stranger = signupForm({ apiId: 'nobody', apiSecret: 'x' }, clock.now());
    for (let i = 0; i < 300; i++) expect((await send(hono, 'a', stranger)).status).toBe(401);
    expect((await send(hono, 'a', stranger)).status).toBe(429);
    expect((await send(hono, 'b', stranger)).status).toBe(401);
  });
});
