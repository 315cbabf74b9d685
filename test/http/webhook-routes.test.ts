import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type BillingEngine, createBillingEngine } from 'billing-engine';
import { parseWebhookBody } from 'billing-engine/chargify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp } from './support/subscribe.js';

/** A webhook receiver on 127.0.0.1 that records every POST and answers with `status`. */
interface Receiver {
  readonly url: string;
  readonly received: { headers: IncomingHttpHeaders; body: string }[];
  status: number;
}

let receiver: Receiver;
let receiverServer: Server;

beforeEach(async () => {
  const received: Receiver['received'] = [];
  const state = { status: 200 };
  receiverServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(state.status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiverServer.listen(0, '127.0.0.1', resolve));
  const address = receiverServer.address();
  if (address === null || typeof address === 'string') throw new Error('receiver has no TCP address');
  receiver = {
    url: `http://127.0.0.1:${address.port}/hooks`,
    received,
    get status() {
      return state.status;
    },
    set status(value: number) {
      state.status = value;
    },
  };
});

afterEach(async () => {
  receiverServer.closeAllConnections();
  await new Promise<void>((resolve) => receiverServer.close(() => resolve()));
});

// The app's engine shares the fixture's storage, clock and gateway, with loopback receivers allowed
// (a development-only option), so the test receiver on 127.0.0.1 can be an endpoint.
let appEngine: BillingEngine;
const http = useHttpFixture({
  wrapEngine: (engine) => {
    appEngine = createBillingEngine({
      storage: engine.storage,
      clock: engine.clock,
      gateway: engine.gateway,
      webhooks: { allowLocalReceivers: true },
    });
    return appEngine;
  },
});

interface EndpointJson {
  readonly id: number;
  readonly url: string;
  readonly webhook_subscriptions: string[];
  readonly status: string;
  readonly site_id: number;
}

interface WebhookJson {
  readonly id: number;
  readonly event: string;
  readonly body: string;
  readonly signature: string;
  readonly signature_hmac_sha_256: string;
  readonly successful: boolean;
  readonly status: string;
  readonly created_at: string;
  readonly accepted_at: string | null;
  readonly last_sent_at: string | null;
  readonly last_sent_url: string | null;
  readonly last_error_at: string | null;
  readonly last_error: string | null;
}

async function createEndpoint(f: HttpFixture, endpoint: unknown, site: 'acme' | 'globex' = 'acme') {
  return f.as(site, { method: 'POST', path: '/endpoints.json', json: { endpoint } });
}

async function endpointId(f: HttpFixture, events = ['signup_success', 'payment_success']): Promise<number> {
  const reply = await createEndpoint(f, { url: receiver.url, webhook_subscriptions: events });
  expect(reply.status, reply.text).toBe(201);
  return reply.json<{ endpoint: EndpointJson }>().endpoint.id;
}

async function webhooks(f: HttpFixture, query = ''): Promise<WebhookJson[]> {
  const reply = await f.as('acme', { path: `/webhooks.json${query}` });
  expect(reply.status, reply.text).toBe(200);
  return reply.json<{ webhook: WebhookJson }[]>().map((item) => item.webhook);
}

describe('webhook endpoints over HTTP', () => {
  it('creates, lists (bare objects), reads, updates and deletes endpoints', async () => {
    const f = http();
    const created = await createEndpoint(f, { url: receiver.url, webhook_subscriptions: ['signup_success'] });
    expect(created.status, created.text).toBe(201);
    const { endpoint } = created.json<{ endpoint: EndpointJson }>();
    const siteId = (await f.engine.site('acme').info()).id;
    expect(endpoint).toEqual({
      id: expect.any(Number),
      url: receiver.url,
      webhook_subscriptions: ['signup_success'],
      status: 'enabled',
      site_id: siteId,
    });

    const list = await f.as('acme', { path: '/endpoints.json' });
    expect(list.status).toBe(200);
    expect(list.json()).toEqual([endpoint]);
    expect((await f.as('acme', { path: `/endpoints/${endpoint.id}.json` })).json()).toEqual({ endpoint });

    const updated = await f.as('acme', {
      method: 'PUT',
      path: `/endpoints/${endpoint.id}.json`,
      json: { endpoint: { webhook_subscriptions: ['payment_success', 'renewal_success'] } },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json<{ endpoint: EndpointJson }>().endpoint).toMatchObject({
      url: receiver.url,
      webhook_subscriptions: ['payment_success', 'renewal_success'],
    });

    const deleted = await f.as('acme', { method: 'DELETE', path: `/endpoints/${endpoint.id}.json` });
    expect(deleted.status).toBe(200);
    expect(deleted.json<{ endpoint: EndpointJson }>().endpoint.id).toBe(endpoint.id);
    expect((await f.as('acme', { path: '/endpoints.json' })).json()).toEqual([]);
    expect((await f.as('acme', { path: `/endpoints/${endpoint.id}.json` })).status).toBe(404);
  });

  it('422: URL rules and event names, with the engine messages', async () => {
    const f = http();
    const cases: [unknown, string[]][] = [
      [
        { url: 'https://hooks.example.com:8443/x', webhook_subscriptions: ['signup_success'] },
        ['Url: port 8443 is not allowed; use port 80 or 443.'],
      ],
      [
        { url: 'http://10.1.2.3/hook', webhook_subscriptions: ['signup_success'] },
        ["Url: must be publicly reachable; '10.1.2.3' is a local or private address."],
      ],
      [
        { url: 'ftp://hooks.example.com/x', webhook_subscriptions: ['nope'] },
        ['Url: must start with http:// or https://.', "Webhook subscriptions: 'nope' is not a valid event."],
      ],
      [{}, ['Url: cannot be blank.', 'Webhook subscriptions: cannot be blank.']],
      [
        { url: 'https://hooks.example.com/x', webhook_subscriptions: 'signup_success' },
        ['Webhook subscriptions: must be a list of event names.'],
      ],
    ];
    for (const [endpoint, errors] of cases) {
      const reply = await createEndpoint(f, endpoint);
      expect(reply.status, JSON.stringify(endpoint)).toBe(422);
      expect(reply.json()).toEqual({ errors });
    }
    const id = await endpointId(f);
    const taken = await createEndpoint(f, { url: receiver.url, webhook_subscriptions: ['signup_success'] });
    expect(taken.json()).toEqual({ errors: ['Url: has already been taken.'] });
    const badUpdate = await f.as('acme', {
      method: 'PUT',
      path: `/endpoints/${id}.json`,
      json: { endpoint: { url: 'https://localhost.localdomain:8080/x' } },
    });
    expect(badUpdate.status).toBe(422);
    // Nothing was created or changed by the refused requests.
    const list = await f.as('acme', { path: '/endpoints.json' });
    expect(list.json<EndpointJson[]>().map((e) => e.url)).toEqual([receiver.url]);
  });

  it('POST /endpoints/{id}/test.json sends the test message now and reports the outcome', async () => {
    const f = http();
    const id = await endpointId(f);
    const reply = await f.as('acme', { method: 'POST', path: `/endpoints/${id}/test.json` });
    expect(reply.status, reply.text).toBe(200);
    const { webhook } = reply.json<{ webhook: WebhookJson }>();
    expect(webhook).toMatchObject({
      event: 'test',
      successful: true,
      status: 'successful',
      last_sent_url: receiver.url,
    });
    expect(typeof webhook.accepted_at).toBe('string');
    expect(webhook.last_error).toBeNull();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]?.body).toBe(webhook.body);
    expect(parseWebhookBody(webhook.body)).toMatchObject({ id: String(webhook.id), event: 'test' });

    receiver.status = 500;
    const failed = await f.as('acme', { method: 'POST', path: `/endpoints/${id}/test.json` });
    expect(failed.status).toBe(200);
    const failedHook = failed.json<{ webhook: WebhookJson }>().webhook;
    expect(failedHook).toMatchObject({ successful: false, status: 'failed', accepted_at: null });
    expect(failedHook.last_error).toMatch(/^500 /);
    expect(typeof failedHook.last_error_at).toBe('string');
    expect((await f.as('acme', { method: 'POST', path: '/endpoints/999/test.json' })).status).toBe(404);
  });
});

describe('webhooks over HTTP', () => {
  it('GET /webhooks.json lists the webhooks of events with both signatures; delivery and replay resend one body', async () => {
    const f = http();
    await seedCatalog(f.engine);
    await endpointId(f);
    await subscribeOverHttp(f);
    const pending = await webhooks(f);
    expect(pending.map((w) => w.event).sort()).toEqual(['payment_success', 'signup_success']);
    for (const w of pending) {
      expect(w).toMatchObject({ successful: false, status: 'pending', accepted_at: null });
      expect(w.signature).toMatch(/^[0-9a-f]{32}$/);
      expect(w.signature_hmac_sha_256).toMatch(/^[0-9a-f]{64}$/);
      expect(w.body.startsWith(`id=${w.id}&event=${w.event}&`)).toBe(true);
      // Not sent yet.
      expect(w).toMatchObject({ last_sent_at: null, last_sent_url: null, last_error_at: null, last_error: null });
      expect(w.created_at).toBe('2026-01-15T07:00:00-05:00');
    }
    expect(await webhooks(f, '?status=successful&&')).toEqual([]);

    const summary = await appEngine.deliverWebhooks();
    expect(summary.delivered).toBe(2);
    const delivered = await webhooks(f, '?status=successful');
    expect(delivered).toHaveLength(2);
    expect(delivered.every((w) => w.successful && typeof w.last_sent_at === 'string')).toBe(true);
    const paged = await webhooks(f, '?per_page=1&page=2');
    expect(paged).toHaveLength(1);

    const signup = delivered.find((w) => w.event === 'signup_success')!;
    const replay = await f.as('acme', { method: 'POST', path: '/webhooks/replay.json', json: { ids: [signup.id] } });
    expect(replay.status, replay.text).toBe(200);
    const replayed = replay.json<{ status: string; webhooks: { webhook: WebhookJson }[] }>();
    expect(replayed.status).toBe('ok');
    expect(replayed.webhooks.map((w) => [w.webhook.id, w.webhook.status])).toEqual([[signup.id, 'pending']]);
    await appEngine.deliverWebhooks();
    const bodies = receiver.received.map((r) => r.body).filter((b) => b === signup.body);
    expect(bodies).toHaveLength(2);
  });

  it('422 and 404: list filters the engine cannot apply, bad dates and statuses, unknown replay ids', async () => {
    const f = http();
    const cases: [string, string[]][] = [
      ['?status=bogus', ['Status: must be successful, failed or pending.']],
      ['?order=oldest_first', ["Order: must be 'newest_first'; other orders are not supported by this server yet."]],
      ['?subscription=4', ['Subscription: filtering webhooks by subscription is not supported by this server yet.']],
    ];
    for (const [query, errors] of cases) {
      const reply = await f.as('acme', { path: `/webhooks.json${query}` });
      expect(reply.status, query).toBe(422);
      expect(reply.json()).toEqual({ errors });
    }
    expect((await f.as('acme', { path: '/webhooks.json?since_date=yesterday' })).status).toBe(422);
    expect((await f.as('acme', { path: '/webhooks.json?order=newest_first' })).status).toBe(200);
    const replay = (json: unknown) => f.as('acme', { method: 'POST', path: '/webhooks/replay.json', json });
    const unknown = await replay({ ids: [999] });
    expect(unknown.status).toBe(404);
    const blank = await replay({ ids: [] });
    expect(blank.status).toBe(422);
    expect(blank.json()).toEqual({ errors: ['Ids: cannot be blank.'] });
    const wrong = await replay({ ids: 'all' });
    expect(wrong.status).toBe(422);
    expect(wrong.json()).toEqual({ errors: ['Ids: must be a list of webhook ids.'] });
    expect((await f.as('acme', { method: 'PUT', path: '/endpoints/999.json', json: { endpoint: {} } })).status).toBe(
      404,
    );
    expect((await f.as('acme', { method: 'DELETE', path: '/endpoints/999.json' })).status).toBe(404);
  });

  it('tenancy: another site key is a 401; a site own key on another site endpoints and webhooks is a 404', async () => {
    const f = http();
    await seedCatalog(f.engine);
    const id = await endpointId(f);
    await subscribeOverHttp(f);
    const [hook] = await webhooks(f);
    const cases = [
      { method: 'GET', path: `/endpoints/${id}.json` },
      { method: 'PUT', path: `/endpoints/${id}.json`, json: { endpoint: { webhook_subscriptions: ['test'] } } },
      { method: 'DELETE', path: `/endpoints/${id}.json` },
      { method: 'POST', path: `/endpoints/${id}/test.json` },
      { method: 'POST', path: '/webhooks/replay.json', json: { ids: [hook!.id] } },
    ];
    for (const request of cases) {
      const stolen = await f.as('acme', { ...request, key: f.keys.globex });
      expect(stolen.status, `${request.method} ${request.path}`).toBe(401);
      const foreign = await f.as('globex', request);
      expect(foreign.status, `${request.method} ${request.path}: ${foreign.text}`).toBe(404);
    }
    expect((await f.as('acme', { path: '/endpoints.json', key: f.keys.globex })).status).toBe(401);
    expect((await f.as('globex', { path: '/endpoints.json' })).json()).toEqual([]);
    expect((await f.as('globex', { path: '/webhooks.json' })).json()).toEqual([]);
    // Acme's endpoint is untouched and no test message was sent.
    expect((await f.as('acme', { path: `/endpoints/${id}.json` })).status).toBe(200);
    expect(receiver.received).toEqual([]);
  });
});
