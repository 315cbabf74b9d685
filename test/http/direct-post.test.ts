import type { IssuedDirectCredentials } from 'billing-engine';
import { describe, expect, it } from 'vitest';
import { buildSecureFields, verifyDirectRedirect } from '../../src/direct-post-helpers.js';
import { directRequestSignature, encodeSecureData } from '../../src/domain/signing/index.js';
import { basic, type HttpReply } from './support/client.js';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';

const CARD = '4111111111111111';
const RETURN = 'https://merchant.example/return';
const FORM = {
  'content-type': 'application/x-www-form-urlencoded',
  accept: 'text/html,application/json;q=0.9,*/*;q=0.8',
};

const SIGNUP_FIELDS: readonly [string, string][] = [
  ['signup[customer][first_name]', 'Ada'],
  ['signup[customer][last_name]', 'Lovelace'],
  ['signup[customer][email]', 'ada@example.com'],
  ['signup[payment_profile][first_name]', 'Ada'],
  ['signup[payment_profile][last_name]', 'Lovelace'],
  ['signup[payment_profile][card_number]', CARD],
  ['signup[payment_profile][expiration_month]', '12'],
  ['signup[payment_profile][expiration_year]', '2030'],
  ['signup[payment_profile][cvv]', '123'],
];

/** A form body as a browser sends it: brackets percent-encoded, `secure[data]` encoded a second time. */
function body(pairs: readonly (readonly [string, string])[]): string {
  return new URLSearchParams(pairs.map(([k, v]): [string, string] => [k, v])).toString();
}

async function setup(f: HttpFixture) {
  await seedCatalog(f.engine);
  const acme = await f.engine.sites.rotateDirectCredentials('acme');
  const globex = await f.engine.sites.rotateDirectCredentials('globex');
  return { acme, globex };
}

function signupBody(creds: IssuedDirectCredentials, now: Date, fields = SIGNUP_FIELDS): string {
  const secure = buildSecureFields({
    apiId: creds.apiId,
    apiSecret: creds.apiSecret,
    data: { signup: { product: { handle: 'pro' }, customer: { reference: 'ada-1' } } },
    redirectUri: RETURN,
    now,
  });
  return body([...Object.entries(secure.fields), ...fields]);
}

function post(f: HttpFixture, path: string, text: string, headers: Record<string, string> = FORM): Promise<HttpReply> {
  // The direct host is one for all sites: the Host names no site, as on api.chargify.com.
  return f.raw({ method: 'POST', path, headers: { host: `api.localhost:${f.port}`, ...headers }, body: text });
}

function getCall(f: HttpFixture, id: string, user: string, password: string): Promise<HttpReply> {
  return f.raw({
    path: `/api/v2/calls/${id}`,
    headers: { host: `api.localhost:${f.port}`, accept: 'application/json', authorization: basic(user, password) },
  });
}

function location(reply: HttpReply): URL {
  expect(reply.status).toBe(303);
  return new URL(String(reply.headers.location));
}

describe('direct post over HTTP', () => {
  const fixture = useHttpFixture();

  it('redirects a signed signup with a response signature that verifies, and serves the call without the card', async () => {
    const f = fixture();
    const { acme } = await setup(f);
    const reply = await post(f, '/api/v2/signups', signupBody(acme, f.clock.now()));
    const redirect = location(reply);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(RETURN);
    const verified = verifyDirectRedirect(redirect, acme);
    expect(verified).toMatchObject({ ok: true, success: true, statusCode: '200', resultCode: '2000' });
    expect(redirect.searchParams.get('api_id')).toBe(acme.apiId);
    const [view] = await f.engine.site('acme').subscriptions.list();
    expect(view!.customer.reference).toBe('ada-1');

    const read = await getCall(f, `${verified.callId}.json`, acme.apiId, acme.apiPassword);
    expect(read.status).toBe(200);
    expect(read.headers['content-type']).toContain('application/json');
    expect(read.text).not.toContain(CARD);
    const { call } = read.json<{
      call: {
        id: string;
        api_id: string;
        success: boolean;
        request: { signup: { payment_profile: Record<string, string> } };
        response: { result: Record<string, unknown>; signup: { subscription: { id: number } } };
      };
    }>();
    expect(call).toMatchObject({ id: verified.callId, api_id: acme.apiId, success: true });
    expect(call.response.result).toEqual({ status_code: '200', result_code: '2000', errors: [] });
    expect(call.response.signup.subscription.id).toBe(view!.subscription.id);
    expect(call.request.signup.payment_profile).toMatchObject({
      card_number: '',
      cvv: '',
      expiration_month: '',
      expiration_year: '',
    });
    const stored = await f.engine.storage.transaction((tx) =>
      tx.directCalls.findById(view!.subscription.siteId, verified.callId),
    );
    expect(stored).toBeDefined();
    expect(JSON.stringify(stored)).not.toContain(CARD);
  });

  it('answers the same post again with 4221 and a new call', async () => {
    const f = fixture();
    const { acme } = await setup(f);
    const text = signupBody(acme, f.clock.now());
    const first = verifyDirectRedirect(location(await post(f, '/api/v2/signups', text)), acme);
    const again = verifyDirectRedirect(location(await post(f, '/api/v2/signups', text)), acme);
    expect(first.resultCode).toBe('2000');
    expect(again).toMatchObject({ ok: true, success: false, resultCode: '4221' });
    expect(again.callId).not.toBe(first.callId);
    expect(await f.engine.site('acme').subscriptions.list()).toHaveLength(1);
    const read = await getCall(f, again.callId, acme.apiId, acme.apiPassword);
    expect(read.json<{ call: { success: boolean } }>().call.success).toBe(false);
  });

  it('answers a tampered post with 4001 and creates nothing', async () => {
    const f = fixture();
    const { acme } = await setup(f);
    const secure = buildSecureFields({
      apiId: acme.apiId,
      apiSecret: acme.apiSecret,
      redirectUri: RETURN,
      now: f.clock.now(),
    });
    const signature = secure.signature;
    const flipped = (signature[0] === 'f' ? '0' : 'f') + signature.slice(1);
    const fields = { ...secure.fields, 'secure[signature]': flipped };
    const reply = await post(
      f,
      '/api/v2/signups',
      body([...Object.entries(fields), ['signup[product][handle]', 'pro'], ...SIGNUP_FIELDS]),
    );
    expect(reply.status).toBe(401);
    expect(reply.headers.location).toBeUndefined();
    const answer = reply.json<{ result: { status_code: string; result_code: string } }>();
    expect(answer.result).toMatchObject({ status_code: '401', result_code: '4001' });
    const callId = String(reply.headers['x-direct-call-id']);
    expect((await getCall(f, callId, acme.apiId, acme.apiPassword)).status).toBe(200);
    expect(await f.engine.site('acme').subscriptions.list()).toHaveLength(0);
    expect(await f.engine.site('acme').customers.list()).toHaveLength(0);
    expect(f.gateway.chargeCalls).toBe(0);
  });

  it('answers an unknown api_id with 401 and no redirect', async () => {
    const f = fixture();
    await setup(f);
    const secure = buildSecureFields({ apiId: 'nobody', apiSecret: 'x', redirectUri: RETURN, now: f.clock.now() });
    const reply = await post(f, '/api/v2/signups', body(Object.entries(secure.fields)));
    expect(reply.status).toBe(401);
    expect(reply.headers.location).toBeUndefined();
  });

  it('answers a card update without a nonce with 4011', async () => {
    const f = fixture();
    const { acme } = await setup(f);
    const signup = verifyDirectRedirect(
      location(await post(f, '/api/v2/signups', signupBody(acme, f.clock.now()))),
      acme,
    );
    const call = (await getCall(f, signup.callId, acme.apiId, acme.apiPassword)).json<{
      call: { response: { signup: { subscription: { id: number } } } };
    }>();
    const id = call.call.response.signup.subscription.id;
    const timestamp = String(Math.floor(f.clock.now().getTime() / 1000));
    const data = encodeSecureData({ redirect_uri: RETURN, subscription_id: id });
    const signature = directRequestSignature({ apiId: acme.apiId, timestamp, data }, acme.apiSecret);
    const text = body([
      ['secure[api_id]', acme.apiId],
      ['secure[timestamp]', timestamp],
      ['secure[data]', data],
      ['secure[signature]', signature],
      ['payment_profile[card_number]', '5555555555554444'],
      ['payment_profile[expiration_month]', '1'],
      ['payment_profile[expiration_year]', '2031'],
    ]);
    const reply = verifyDirectRedirect(location(await post(f, `/api/v2/subscriptions/${id}/card_update`, text)), acme);
    expect(reply).toMatchObject({ ok: true, statusCode: '401', resultCode: '4011' });
    expect((await f.engine.site('acme').subscriptions.get(id)).paymentProfile?.lastFour).toBe('1111');
  });

  it('updates the card with a signed card update form', async () => {
    const f = fixture();
    const { acme } = await setup(f);
    await post(f, '/api/v2/signups', signupBody(acme, f.clock.now()));
    const [view] = await f.engine.site('acme').subscriptions.list();
    const id = view!.subscription.id;
    const secure = buildSecureFields({
      apiId: acme.apiId,
      apiSecret: acme.apiSecret,
      data: { subscription_id: id },
      redirectUri: RETURN,
      now: f.clock.now(),
    });
    const text = body([
      ...Object.entries(secure.fields),
      ['payment_profile[card_number]', '5555555555554444'],
      ['payment_profile[expiration_month]', '1'],
      ['payment_profile[expiration_year]', '2031'],
    ]);
    const reply = verifyDirectRedirect(location(await post(f, `/api/v2/subscriptions/${id}/card_update`, text)), acme);
    expect(reply).toMatchObject({ ok: true, success: true, resultCode: '2000' });
    expect((await f.engine.site('acme').subscriptions.get(id)).paymentProfile?.lastFour).toBe('4444');
    const json = await post(f, `/api/v2/subscriptions/${id}/card_update`, '{}', { 'content-type': 'application/json' });
    expect(json.status).toBe(415);
  });

  it('reads calls only with the right direct credentials of the right site', async () => {
    const f = fixture();
    const { acme, globex } = await setup(f);
    const { callId } = verifyDirectRedirect(
      location(await post(f, '/api/v2/signups', signupBody(acme, f.clock.now()))),
      acme,
    );
    expect((await getCall(f, callId, acme.apiId, acme.apiPassword)).status).toBe(200);
    const wrong = await getCall(f, callId, acme.apiId, 'wrong-password');
    expect(wrong.status).toBe(401);
    expect(wrong.headers['content-type']).toBeDefined();
    // The main API key is not a direct credential.
    expect((await getCall(f, callId, f.keys.acme, 'X')).status).toBe(401);
    expect((await getCall(f, callId, globex.apiId, globex.apiPassword)).status).toBe(404);
    const anonymous = await f.raw({ path: `/api/v2/calls/${callId}`, headers: { host: `api.localhost:${f.port}` } });
    expect(anonymous.status).toBe(401);
  });

  it('answers a server-to-server JSON signup with Basic auth with the call JSON', async () => {
    const f = fixture();
    const { acme } = await setup(f);
    const json = JSON.stringify({
      signup: {
        product: { handle: 'pro' },
        customer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
        payment_profile: { card_number: '1', expiration_month: 12, expiration_year: 2030 },
      },
    });
    const headers = { 'content-type': 'application/json', accept: 'application/json' };
    const reply = await post(f, '/api/v2/signups.json', json, {
      ...headers,
      authorization: basic(acme.apiId, acme.apiPassword),
    });
    expect(reply.status).toBe(200);
    const answer = reply.json<{ result: unknown; meta: unknown; signup: { subscription: { id: number } } }>();
    expect(answer.result).toEqual({ status_code: '200', result_code: '2000', errors: [] });
    expect(answer.meta).toEqual(answer.result);
    const [view] = await f.engine.site('acme').subscriptions.list();
    expect(answer.signup.subscription.id).toBe(view!.subscription.id);
    const wrong = await post(f, '/api/v2/signups', json, { ...headers, authorization: basic(acme.apiId, 'nope') });
    expect(wrong.status).toBe(401);
    expect(wrong.json<{ result: { result_code: string } }>().result.result_code).toBe('4001');
    expect((await post(f, '/api/v2/signups', json, headers)).status).toBe(401);
  });

  it('answers a declined card with a 4300 redirect', async () => {
    const f = fixture();
    const { acme } = await setup(f);
    const fields = SIGNUP_FIELDS.map(([k, v]): [string, string] => [k, k.endsWith('[card_number]') ? '2' : v]);
    const reply = verifyDirectRedirect(
      location(await post(f, '/api/v2/signups', signupBody(acme, f.clock.now(), fields))),
      acme,
    );
    expect(reply).toMatchObject({ ok: true, statusCode: '422', resultCode: '4300' });
    expect(await f.engine.site('acme').subscriptions.list()).toHaveLength(0);
  });
});
