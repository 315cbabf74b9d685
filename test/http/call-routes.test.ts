import type { IssuedDirectCredentials } from 'billing-engine';
import { buildSecureFields } from 'billing-engine/chargify';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';

const http = useHttpFixture();

const CARD = '4111111111111111';

/** A signed direct signup of `site` posted as a browser would; returns the call id from the redirect. */
async function directSignup(f: HttpFixture, creds: IssuedDirectCredentials, card = CARD): Promise<string> {
  const secure = buildSecureFields({
    apiId: creds.apiId,
    apiSecret: creds.apiSecret,
    data: { signup: { product: { handle: 'pro' }, customer: { reference: `ref-${card.slice(-4)}` } } },
    redirectUri: 'https://merchant.example/return',
    now: f.clock.now(),
  });
  const fields: [string, string][] = [
    ...Object.entries(secure.fields),
    ['signup[customer][first_name]', 'Ada'],
    ['signup[customer][last_name]', 'Lovelace'],
    ['signup[customer][email]', 'ada@example.com'],
    ['signup[payment_profile][card_number]', card],
    ['signup[payment_profile][expiration_month]', '12'],
    ['signup[payment_profile][expiration_year]', '2030'],
    ['signup[payment_profile][cvv]', '123'],
  ];
  const reply = await f.raw({
    method: 'POST',
    path: '/api/v2/signups',
    headers: { host: `api.localhost:${f.port}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  expect(reply.status, reply.text).toBe(303);
  const callId = new URL(String(reply.headers.location)).searchParams.get('call_id');
  if (callId === null) throw new Error('the redirect has no call_id');
  return callId;
}

interface CallJson {
  readonly id: string;
  readonly api_id: string;
  readonly success: boolean;
  readonly request: Record<string, unknown>;
  readonly response: { result: { status_code: string | number; result_code: string }; signup?: unknown };
}

describe('GET /calls/{id}.json on the main API host', () => {
  it('answers a call of the key site with the direct call record, without the card number', async () => {
    const f = http();
    await seedCatalog(f.engine);
    const creds = await f.engine.sites.rotateDirectCredentials('acme');
    const callId = await directSignup(f, creds);
    // The old client's request: `accept: application/json`, Basic key:x, an empty cookie, content-length 0.
    const reply = await f.as('acme', {
      path: `/calls/${callId}.json`,
      headers: { cookie: '', 'content-length': '0' },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers['content-type']).toContain('application/json');
    const { call } = reply.json<{ call: CallJson }>();
    expect(call).toMatchObject({ id: callId, api_id: creds.apiId, success: true });
    expect(String(call.response.result.result_code)).toBe('2000');
    expect(call.response.signup).toMatchObject({ subscription: { id: expect.any(Number) } });
    expect(reply.text).not.toContain(CARD);
    // The same record as the direct host's call read.
    const direct = await f.raw({
      path: `/api/v2/calls/${callId}`,
      headers: {
        host: `api.localhost:${f.port}`,
        authorization: `Basic ${Buffer.from(`${creds.apiId}:${creds.apiPassword}`).toString('base64')}`,
      },
    });
    expect(direct.json()).toEqual(reply.json());
    // Upper-case hex names the same call.
    expect((await f.as('acme', { path: `/calls/${callId.toUpperCase()}.json` })).status).toBe(200);
  });

  it('404 for an unknown or malformed id and for another site call; 401 for another site key', async () => {
    const f = http();
    await seedCatalog(f.engine);
    const creds = await f.engine.sites.rotateDirectCredentials('acme');
    const callId = await directSignup(f, creds);
    for (const id of ['0'.repeat(40), 'not-a-call', `${callId}0`]) {
      const reply = await f.as('acme', { path: `/calls/${id}.json` });
      expect(reply.status, id).toBe(404);
      expect(reply.headers['content-type']).toContain('application/json');
    }
    const foreign = await f.as('globex', { path: `/calls/${callId}.json` });
    expect(foreign.status).toBe(404);
    expect(foreign.text).not.toContain(creds.apiId);
    const stolen = await f.as('acme', { path: `/calls/${callId}.json`, key: f.keys.globex });
    expect(stolen.status).toBe(401);
    expect(stolen.headers['content-type']).toContain('text/plain');
    // The direct credentials are not an API key on the main host.
    const direct = await f.as('acme', { path: `/calls/${callId}.json`, key: creds.apiId });
    expect(direct.status).toBe(401);
  });
});
