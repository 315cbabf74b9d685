import { createHash, createHmac } from 'node:crypto';
import {
  type BillingEvent,
  createTestGateway,
  ManualClock,
  type Storage,
  type StorageTransaction,
} from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseWebhookBody } from '../../src/domain/signing/index.js';
import { CatalogService } from '../../src/services/catalog-service.js';
import { runCommand } from '../../src/services/command-runner.js';
import { CustomerService } from '../../src/services/customer-service.js';
import { LifecycleService } from '../../src/services/lifecycle-service.js';
import { RenewalService } from '../../src/services/renewal-service.js';
import { SiteService } from '../../src/services/site-service.js';
import { type SubscriptionDeps, SubscriptionService } from '../../src/services/subscription-service.js';
import {
  WebhookService,
  type WebhookServiceOptions,
  webhookDeliverySubject,
} from '../../src/services/webhook-service.js';
import { verifyWebhook, WEBHOOK_SIGNATURE_HEADER, webhookSignatureFrom } from '../../src/webhook-receiver.js';
import { BLOCKED, ConnectionObserver, ScriptedResolver } from '../support/connection-observer.js';
import { rejection } from '../support/engine-harness.js';
import { answer, ok, Receiver, type Reply } from '../support/loopback-receiver.js';

// ---------------------------------------------------------------------------------------------
// Loopback receivers: real HTTP servers on 127.0.0.1, port 0, never any other address.

// ---------------------------------------------------------------------------------------------
// Fixture: the services over one storage, with the webhook fan-out wired into every command.

/** A storage whose next transaction fails after its work returned: a commit that never happened. */
function failableStorage(inner: Storage): Storage & { failNextCommit(): void } {
  let fail = false;
  return {
    capabilities: inner.capabilities,
    migrate: () => inner.migrate(),
    close: () => inner.close(),
    transaction: (work, options) =>
      inner.transaction(async (tx: StorageTransaction) => {
        const result = await work(tx);
        if (fail) {
          fail = false;
          throw new Error('commit failed');
        }
        return result;
      }, options),
    failNextCommit() {
      fail = true;
    },
  };
}

interface Fixture {
  readonly storage: ReturnType<typeof failableStorage>;
  readonly inner: Storage;
  readonly clock: ManualClock;
  readonly deps: SubscriptionDeps;
  /** Events heard after commit. */
  readonly heard: BillingEvent[];
  /** The service whose `fanOut` is the `onEvents` hook; also the default worker. */
  webhooks: WebhookService;
  /** Another service over the same deps (another worker, other options). */
  make(options?: WebhookServiceOptions): WebhookService;
  readonly sites: SiteService;
  readonly customers: CustomerService;
  readonly catalog: CatalogService;
  readonly subscriptions: SubscriptionService;
  readonly lifecycle: LifecycleService;
  /** Starts a loopback receiver that is stopped after the test. */
  receiver(reply?: Reply): Promise<Receiver>;
}

const START = '2026-03-02T15:00:00Z';
const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

function useWebhookFixture(harness: StorageHarness): () => Fixture {
  let current: Fixture | undefined;
  let receivers: Receiver[] = [];
  beforeEach(async () => {
    const inner = await harness.create();
    const storage = failableStorage(inner);
    const clock = new ManualClock(START);
    const heard: BillingEvent[] = [];
    const holder: { fanOut?: WebhookService } = {};
    const deps: SubscriptionDeps = {
      storage,
      clock,
      gateway: createTestGateway(),
      emitter: { emit: (_key, event) => heard.push(event) },
      onEvents: (tx, events, now) => holder.fanOut!.fanOut(tx, events, now),
    };
    const make = (options: WebhookServiceOptions = {}) =>
      new WebhookService(deps, { allowLocalReceivers: true, timeoutMs: 2000, ...options });
    holder.fanOut = make();
    receivers = [];
    current = {
      storage,
      inner,
      clock,
      deps,
      heard,
      get webhooks() {
        return holder.fanOut!;
      },
      set webhooks(service: WebhookService) {
        holder.fanOut = service;
      },
      make,
      sites: new SiteService(deps),
      customers: new CustomerService(deps),
      catalog: new CatalogService(deps),
      subscriptions: new SubscriptionService(deps),
      lifecycle: new LifecycleService(deps, new RenewalService(deps)),
      async receiver(reply = ok) {
        const receiver = await new Receiver(reply).start();
        receivers.push(receiver);
        return receiver;
      },
    };
  });
  afterEach(async () => {
    for (const receiver of receivers) await receiver.stop();
    const fixture = current;
    current = undefined;
    if (fixture) await (harness.destroy ? harness.destroy(fixture.inner) : fixture.inner.close());
  });
  return () => {
    if (!current) throw new Error('webhook fixture used outside a test');
    return current;
  };
}

async function site(f: Fixture, subdomain = 'acme', timeZone = 'America/New_York') {
  const created = await f.sites.create({ subdomain, currency: 'USD', timeZone });
  return { site: created.site, sharedKey: created.sharedKey };
}

let customerNumber = 0;
function customer(f: Fixture, subdomain = 'acme', reference?: string) {
  customerNumber += 1;
  return f.customers.create(subdomain, {
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: `ada+${customerNumber}@example.com`,
    ...(reference === undefined ? {} : { reference }),
  });
}

const hmac = (key: string, body: string) => createHmac('sha256', key).update(body).digest('hex');
const WEBHOOK_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{4}$/;

/** Webhook-related due rows still open for a webhook. */
function openDeliveries(f: Fixture, siteId: number, webhookId: number) {
  return f.storage.transaction((tx) =>
    tx.dueWork.pendingFor(siteId, webhookDeliverySubject(webhookId), ['webhook_delivery']),
  );
}

// ---------------------------------------------------------------------------------------------

/** Webhooks end to end over real loopback receivers: fan-out, signing, delivery, retries, health, URL rules. */
export function webhooksSuite(harness: StorageHarness): void {
  describe(`webhooks (${harness.name})`, () => {
    const fixture = useWebhookFixture(harness);

    describe('signing and the receiver helper', () => {
      it('passes the published and constructed vectors W1-W3 through verifyWebhook and a plain HMAC', () => {
        const vectors = [
          {
            key: '123',
            body: 'payload[chargify]=testing&event=test',
            sig: '19826d51b9f866b26eda1f154de192593360f8d0bcb63df8a28540a5dcf733f1',
          },
          {
            key: '123',
            body: 'id=123456&event=test&payload[chargify]=testing',
            sig: 'f8c4861ec8d655e5144483801474d69c691ae070062a3d8642eda7250a7f2284',
          },
          {
            key: 'site-shared-key',
            body: 'id=1&event=subscription_state_change&payload[subscription][id]=42&payload[subscription][state]=past_due&payload[subscription][previous_state]=active&payload[event_id]=7',
            sig: '60a4709451f0d63c3133a0d478bf2a7e11c13d7a5e6afbe4a3cc8c8ec8beb1be',
          },
        ];
        for (const v of vectors) {
          expect(hmac(v.key, v.body)).toBe(v.sig);
          const verified = verifyWebhook({ rawBody: v.body, signature: v.sig, sharedKey: v.key });
          expect(verified.ok).toBe(true);
          expect(
            verifyWebhook({ rawBody: Buffer.from(v.body), signature: v.sig.toUpperCase(), sharedKey: v.key }).ok,
          ).toBe(true);
          expect(verifyWebhook({ rawBody: `${v.body}&x=1`, signature: v.sig, sharedKey: v.key }).ok).toBe(false);
          expect(verifyWebhook({ rawBody: v.body, signature: v.sig, sharedKey: `${v.key}x` }).ok).toBe(false);
        }
        const w1 = verifyWebhook({ rawBody: vectors[0]!.body, signature: [vectors[0]!.sig], sharedKey: '123' });
        expect(w1).toMatchObject({ ok: true, id: undefined, event: 'test', payload: { chargify: 'testing' } });
        const w3 = verifyWebhook({
          rawBody: vectors[2]!.body,
          signature: vectors[2]!.sig,
          sharedKey: 'site-shared-key',
        });
        expect(w3).toMatchObject({ ok: true, id: '1', event: 'subscription_state_change' });
        expect(w3.payload).toEqual({
          subscription: { id: '42', state: 'past_due', previous_state: 'active' },
          event_id: '7',
        });
      });

      it('rejects missing, malformed and doubled signatures without parsing the body', () => {
        const body = 'id=123456&event=test&payload[chargify]=testing';
        const sig = hmac('123', body);
        for (const signature of [undefined, null, '', 'zz', sig.slice(1), [sig, sig], []]) {
          const result = verifyWebhook({ rawBody: body, signature, sharedKey: '123' });
          expect(result).toEqual({ ok: false, id: undefined, event: undefined, payload: undefined, fields: undefined });
        }
        expect(verifyWebhook({ rawBody: body, signature: sig, sharedKey: '' }).ok).toBe(false);
        expect(webhookSignatureFrom({ [WEBHOOK_SIGNATURE_HEADER]: sig })).toBe(sig);
        expect(webhookSignatureFrom(new Headers({ 'X-Chargify-Webhook-Signature-Hmac-Sha-256': sig }))).toBe(sig);
      });
    });

    describe('delivery', () => {
      it('POSTs a signed form body that verifies with the helper and with an independent HMAC', async () => {
        const f = fixture();
        const { site: acme, sharedKey } = await site(f);
        const receiver = await f.receiver();
        const endpoint = await f.webhooks.createEndpoint('acme', {
          url: `${receiver.url}/hooks?sig={signature_hmac_sha_256}`,
          webhookSubscriptions: ['customer_create'],
        });
        const created = await customer(f, 'acme', 'ref-1');
        expect(receiver.hits).toHaveLength(0);
        expect(await f.webhooks.deliverDue()).toEqual({
          processed: 1,
          delivered: 1,
          retried: 0,
          gaveUp: 0,
          skipped: 0,
          errors: 0,
        });
        expect(receiver.hits).toHaveLength(1);
        const hit = receiver.hits[0]!;
        const [webhook] = await f.webhooks.list('acme');
        expect(webhook).toBeDefined();
        expect(hit.headers['content-type']).toBe('application/x-www-form-urlencoded');
        expect(hit.headers[WEBHOOK_SIGNATURE_HEADER]).toBe(hmac(sharedKey, hit.body));
        expect(hit.headers['x-chargify-webhook-signature-hmac-sha-256']).toBeUndefined();
        expect(hit.path).toBe(`/hooks?sig=${hmac(sharedKey, hit.body)}`);
        expect(hit.body).toBe(webhook!.body);
        expect(
          hit.body.startsWith(`id=${webhook!.id}&event=customer_create&payload[customer][id]=${created.id}&`),
        ).toBe(true);
        expect(hit.body).toMatch(
          new RegExp(
            `&payload\\[site\\]\\[id\\]=${acme.id}&payload\\[site\\]\\[subdomain\\]=acme&payload\\[event_id\\]=\\d+$`,
          ),
        );
        expect(hit.body).toContain(`payload[customer][email]=ada%2B${customerNumber}%40example.com`);
        const verified = verifyWebhook({ rawBody: hit.body, signature: webhookSignatureFrom(hit.headers), sharedKey });
        expect(verified.ok).toBe(true);
        expect(verified.id).toBe(String(webhook!.id));
        expect(verified.payload).toMatchObject({
          customer: { id: String(created.id), reference: 'ref-1', first_name: 'Ada' },
          site: { subdomain: 'acme' },
        });
        expect(String(verified.payload?.event_id)).toBe(String(webhook!.eventId));
        expect(webhook).toMatchObject({
          status: 'successful',
          successful: true,
          attempts: 1,
          endpointId: endpoint.id,
          event: 'customer_create',
          lastError: null,
        });
        expect(webhook!.acceptedAt?.toISOString()).toBe(new Date(START).toISOString());
        expect(webhook!.lastSentUrl).toBe(`${receiver.url}/hooks?sig=${hmac(sharedKey, hit.body)}`);
        expect(webhook!.signatureHmacSha256).toBe(hmac(sharedKey, hit.body));
        expect(webhook!.signature).toBe(
          createHash('md5')
            .update(sharedKey + hit.body)
            .digest('hex'),
        );
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 0 });
        expect(receiver.hits).toHaveLength(1);
      });

      it("builds subscription payloads in the service's shape, with the event's own states", async () => {
        const f = fixture();
        const { site: acme } = await site(f);
        const receiver = await f.receiver();
        await f.webhooks.createEndpoint('acme', {
          url: receiver.url,
          webhookSubscriptions: ['signup_success', 'payment_success', 'subscription_state_change'],
        });
        const family = await f.catalog.createFamily('acme', { name: 'Plans' });
        await f.catalog.createProduct('acme', family.id, {
          name: 'Basic',
          handle: 'basic',
          priceInCents: 1000,
          interval: 1,
          intervalUnit: 'month',
        });
        const signup = await f.subscriptions.create('acme', {
          productHandle: 'basic',
          customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
          creditCard: VISA,
        });
        f.clock.advance({ days: 3 });
        // Canceling cancels the subscription's due work; the queued deliveries (webhook 1 and
        // subscription 1 share a number) must survive it.
        await f.lifecycle.cancel('acme', signup.subscription.id, { cancellationMessage: 'Too pricey: 100%' });
        await f.webhooks.deliverDue();
        const byEvent = new Map(receiver.hits.map((hit) => [/&event=([a-z_]+)&/.exec(hit.body)![1]!, hit]));
        expect([...byEvent.keys()].sort()).toEqual(['payment_success', 'signup_success', 'subscription_state_change']);
        const parse = (key: string) =>
          parseWebhookBody(byEvent.get(key)!.body).payload as Record<string, Record<string, unknown>>;
        const signed = parse('signup_success');
        expect(signed.subscription).toMatchObject({
          id: String(signup.subscription.id),
          state: 'active',
          previous_state: 'active',
          balance_in_cents: '0',
          product_price_in_cents: '1000',
          signup_revenue: '10.00',
          created_at: '2026-03-02 10:00:00 -0500',
          customer: { email: 'a@b.co' },
          product: {
            handle: 'basic',
            price_in_cents: '1000',
            product_family: { id: String(family.id), name: 'Plans' },
          },
          credit_card: { masked_card_number: 'XXXX-XXXX-XXXX-1111', card_type: 'visa' },
        });
        expect(signed.site).toEqual({ id: String(acme.id), subdomain: 'acme' });
        expect(parse('payment_success').transaction).toMatchObject({
          amount_in_cents: '1000',
          transaction_type: 'payment',
          success: 'true',
        });
        const change = parse('subscription_state_change');
        expect(change.subscription).toMatchObject({
          state: 'cancelled',
          previous_state: 'active',
          cancellation_message: 'Too pricey: 100%',
        });
        expect(change.subscription!.canceled_at).toBe('2026-03-05 10:00:00 -0500');
        expect(change.subscription!.updated_at).toMatch(WEBHOOK_TIME);
        const raw = byEvent.get('subscription_state_change')!.body;
        expect(raw).toContain('cancellation_message]=Too%20pricey%3A%20100%25&');
        expect(raw).toContain('canceled_at]=2026-03-05%2010%3A00%3A00%20-0500&');
        expect(raw).toMatch(/&payload\[event_id\]=\d+$/);
      });

      it('sends the hosted service headers and spellings under chargify compatibility', async () => {
        const f = fixture();
        f.webhooks = f.make({ compat: 'chargify' });
        const { sharedKey } = await site(f, 'berlin', 'Europe/Berlin');
        const receiver = await f.receiver();
        await f.webhooks.createEndpoint('berlin', {
          url: `${receiver.url}/?s={signature_hmac_sha_256}&m={signature}`,
          webhookSubscriptions: ['subscription_state_change'],
        });
        const family = await f.catalog.createFamily('berlin', { name: 'Plans' });
        await f.catalog.createProduct('berlin', family.id, {
          name: 'Basic',
          handle: 'basic',
          priceInCents: 1000,
          interval: 1,
          intervalUnit: 'month',
        });
        const signup = await f.subscriptions.create('berlin', {
          productHandle: 'basic',
          customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
          creditCard: VISA,
        });
        await f.lifecycle.cancel('berlin', signup.subscription.id);
        await f.webhooks.deliverDue();
        expect(receiver.hits).toHaveLength(1);
        const hit = receiver.hits[0]!;
        const md5 = createHash('md5')
          .update(sharedKey + hit.body)
          .digest('hex');
        expect(hit.headers['x-chargify-webhook-signature-hmac-sha-256']).toBe(hmac(sharedKey, hit.body));
        expect(hit.headers[WEBHOOK_SIGNATURE_HEADER]).toBe(hmac(sharedKey, hit.body));
        expect(hit.headers['x-chargify-webhook-signature']).toBe(md5);
        expect(hit.headers['x-chargify-webhook-id']).toBe(hit.id);
        expect(hit.path).toBe(`/?s=${hmac(sharedKey, hit.body)}&m=${md5}`);
        const payload = parseWebhookBody(hit.body).payload as Record<string, Record<string, unknown>>;
        expect(payload.subscription).toMatchObject({ state: 'canceled', previous_state: 'active' });
        // US Eastern, as the hosted service writes webhook times, not the site's Berlin zone.
        expect(payload.subscription!.canceled_at).toBe('2026-03-02 10:00:00 -0500');
      });

      it('sends the documented test body to one endpoint and reports the outcome', async () => {
        const f = fixture();
        const { sharedKey } = await site(f);
        const receiver = await f.receiver((hit, res) => answer(res, hit, receiver.hits.length === 1 ? 503 : 200));
        const endpoint = await f.webhooks.createEndpoint('acme', {
          url: receiver.url,
          webhookSubscriptions: ['customer_update'],
        });
        const failed = await f.webhooks.sendTest('acme', endpoint.id);
        expect(failed).toMatchObject({
          event: 'test',
          eventId: null,
          status: 'failed',
          attempts: 1,
          lastError: '503 Service Unavailable (retry 1 of 1)',
        });
        expect((await f.webhooks.getEndpoint('acme', endpoint.id)).failureCount).toBe(0);
        const passed = await f.webhooks.sendTest('acme', endpoint.id);
        expect(passed.body).toBe(`id=${passed.id}&event=test&payload[chargify]=testing`);
        expect(passed).toMatchObject({ status: 'successful', attempts: 1 });
        expect(receiver.hits.map((h) => h.body)).toEqual([failed.body, passed.body]);
        expect(
          verifyWebhook({
            rawBody: receiver.hits[1]!.body,
            signature: webhookSignatureFrom(receiver.hits[1]!.headers),
            sharedKey,
          }),
        ).toMatchObject({
          ok: true,
          event: 'test',
          payload: { chargify: 'testing' },
        });
        expect((await rejection(f.webhooks.sendTest('acme', 999_999))).code).toBe('not_found');
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 0 });
      });
    });

    describe('retries and recovery', () => {
      it('retries on the schedule: one accepted delivery per webhook, stable id and body, attempts counted', async () => {
        const f = fixture();
        const { site: acme } = await site(f);
        const tries = new Map<string, number>();
        const receiver = await f.receiver((hit, res) => {
          const n = (tries.get(hit.id!) ?? 0) + 1;
          tries.set(hit.id!, n);
          answer(res, hit, n <= 3 ? 500 : 200);
        });
        const endpoint = await f.webhooks.createEndpoint('acme', {
          url: receiver.url,
          webhookSubscriptions: ['customer_create'],
        });
        await customer(f);
        const [created] = await f.webhooks.list('acme');
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 1, retried: 1 });
        expect(await f.webhooks.get('acme', created!.id)).toMatchObject({
          status: 'pending',
          attempts: 1,
          lastError: '500 Internal Server Error (retry 1 of 5)',
        });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 0 });
        f.clock.advance({ seconds: 9 });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 0 });
        f.clock.advance({ seconds: 1 });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 1, retried: 1 });
        f.clock.advance({ seconds: 14 });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 0 });
        f.clock.advance({ seconds: 1 });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 1, retried: 1 });
        expect((await f.webhooks.getEndpoint('acme', endpoint.id)).failureCount).toBe(3);
        f.clock.advance({ seconds: 90 });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 1, delivered: 1 });
        f.clock.advance({ hours: 1 });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 0 });
        expect(receiver.hits.map((h) => h.status)).toEqual([500, 500, 500, 200]);
        expect(new Set(receiver.hits.map((h) => h.body))).toEqual(new Set([created!.body]));
        expect(new Set(receiver.hits.map((h) => h.headers[WEBHOOK_SIGNATURE_HEADER])).size).toBe(1);
        expect(receiver.accepted()).toEqual(new Map([[String(created!.id), 1]]));
        const done = await f.webhooks.get('acme', created!.id);
        expect(done).toMatchObject({
          id: created!.id,
          status: 'successful',
          attempts: 4,
          lastError: '500 Internal Server Error (retry 3 of 5)',
        });
        expect(done.acceptedAt?.toISOString()).toBe('2026-03-02T15:01:55.000Z');
        expect((await f.webhooks.getEndpoint('acme', endpoint.id)).failureCount).toBe(0);
        expect(await openDeliveries(f, acme.id, created!.id)).toEqual([]);
      });

      it('gives up after five attempts and delivers the same webhook again on replay', async () => {
        const f = fixture();
        await site(f);
        let healthy = false;
        const receiver = await f.receiver((hit, res) =>
          healthy ? answer(res, hit, 200) : answer(res, hit, 404, 'Resource Not Found'),
        );
        await f.webhooks.createEndpoint('acme', { url: receiver.url, webhookSubscriptions: ['customer_create'] });
        await customer(f);
        const [webhook] = await f.webhooks.list('acme');
        // Running far ahead sends every retry at its own due instant.
        const summary = await f.webhooks.deliverDue({ until: new Date(Date.parse(START) + 3_600_000) });
        expect(summary).toMatchObject({ processed: 5, retried: 4, gaveUp: 1, delivered: 0 });
        const failed = await f.webhooks.get('acme', webhook!.id);
        expect(failed).toMatchObject({
          status: 'failed',
          attempts: 5,
          lastError: '404 Resource Not Found (retry 5 of 5)',
        });
        expect(failed.lastErrorAt?.toISOString()).toBe('2026-03-02T15:04:55.000Z');
        expect(await f.webhooks.list('acme', { status: 'failed' })).toHaveLength(1);
        healthy = true;
        const [replayed] = await f.webhooks.replay('acme', [webhook!.id]);
        expect(replayed).toMatchObject({ id: webhook!.id, status: 'pending', body: webhook!.body });
        await f.webhooks.replay('acme', [webhook!.id]);
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 1, delivered: 1 });
        expect(receiver.hits).toHaveLength(6);
        expect(receiver.hits[5]!.body).toBe(webhook!.body);
        expect(await f.webhooks.get('acme', webhook!.id)).toMatchObject({ status: 'successful', attempts: 6 });
        await f.webhooks.replay('acme', [webhook!.id]);
        await f.webhooks.deliverDue();
        expect(receiver.accepted().get(String(webhook!.id))).toBe(2);
        expect((await rejection(f.webhooks.replay('acme', [webhook!.id, 424_242]))).code).toBe('not_found');
        expect((await rejection(f.webhooks.replay('acme', []))).code).toBe('validation');
      });

      it('gets every webhook to a receiver that is down, fails and times out for a while: none lost, ids stable', async () => {
        const f = fixture();
        await site(f);
        let mode: 'fail' | 'hang' | 'ok' = 'fail';
        const receiver = await f.receiver((hit, res) => {
          if (mode === 'fail') answer(res, hit, 500);
          else if (mode === 'ok') answer(res, hit, 200);
          // 'hang': never answer; the worker gives up on the attempt after timeoutMs.
        });
        f.webhooks = f.make({ timeoutMs: 200 });
        await f.webhooks.createEndpoint('acme', { url: receiver.url, webhookSubscriptions: ['customer_create'] });
        for (let i = 0; i < 3; i++) await customer(f);
        const webhooks = await f.webhooks.list('acme');
        const ids = webhooks.map((w) => String(w.id)).sort();
        expect(ids).toHaveLength(3);

        const port = new URL(receiver.url).port;
        await receiver.stop();
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 3, retried: 3 });
        for (const w of await f.webhooks.list('acme'))
          expect(w.lastError).toBe('Connection failed: ECONNREFUSED (retry 1 of 5)');
        expect(receiver.hits).toHaveLength(0);

        await receiver.start();
        expect(new URL(receiver.url).port).toBe(port);
        f.clock.advance({ seconds: 10 });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 3, retried: 3 });

        mode = 'hang';
        f.clock.advance({ seconds: 15 });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 3, retried: 3 });
        for (const w of await f.webhooks.list('acme'))
          expect(w.lastError).toBe('Timed out after 200 ms (retry 3 of 5)');

        mode = 'ok';
        f.clock.advance({ seconds: 90 });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 3, delivered: 3 });
        expect([...receiver.accepted().entries()].sort()).toEqual(ids.map((id) => [id, 1]));
        for (const w of webhooks) {
          const bodies = receiver.hits.filter((h) => h.id === String(w.id)).map((h) => h.body);
          expect(bodies).toEqual([w.body, w.body, w.body]);
        }
        for (const w of await f.webhooks.list('acme')) expect(w).toMatchObject({ status: 'successful', attempts: 4 });
      });

      it('times out a receiver that never answers after timeoutMs', async () => {
        const f = fixture();
        await site(f);
        const receiver = await f.receiver(() => undefined);
        const worker = f.make({ timeoutMs: 150 });
        await worker.createEndpoint('acme', { url: receiver.url, webhookSubscriptions: ['customer_create'] });
        await customer(f);
        const started = performance.now();
        expect(await worker.deliverDue()).toMatchObject({ processed: 1, retried: 1 });
        const elapsed = performance.now() - started;
        expect(elapsed).toBeGreaterThanOrEqual(100);
        expect(elapsed).toBeLessThan(10_000);
        expect(receiver.hits).toHaveLength(1);
        const [webhook] = await worker.list('acme');
        expect(webhook!.lastError).toBe('Timed out after 150 ms (retry 1 of 5)');
      });

      it('treats a redirect as a failure without following it, and never reads a huge body to its end', async () => {
        const f = fixture();
        await site(f);
        const elsewhere = await f.receiver();
        const redirecting = await f.receiver((hit, res) => {
          hit.status = 302;
          res.writeHead(302, { location: `${elsewhere.url}/stolen` });
          res.end();
        });
        let cutOff = 0;
        const LIMIT = 256 * 1024 * 1024;
        const endless =
          (status: number): Reply =>
          (hit, res, req) => {
            hit.status = status;
            res.writeHead(status, { 'content-type': 'application/octet-stream' });
            const chunk = Buffer.alloc(64 * 1024, 120);
            let written = 0;
            let left = false;
            req.socket.on('close', () => {
              left = true;
              if (written < LIMIT) cutOff += 1;
            });
            const pump = () => {
              // Bounded: stops by itself after 256 MB even if the client kept reading.
              while (!left && written < LIMIT) {
                written += chunk.length;
                if (!res.write(chunk)) return void res.once('drain', pump);
              }
              res.end();
            };
            pump();
          };
        const huge = await f.receiver(endless(200));
        const hugeError = await f.receiver(endless(500));
        f.webhooks = f.make({ timeoutMs: 20_000 });
        const a = await f.webhooks.createEndpoint('acme', {
          url: redirecting.url,
          webhookSubscriptions: ['customer_create'],
        });
        const b = await f.webhooks.createEndpoint('acme', { url: huge.url, webhookSubscriptions: ['customer_create'] });
        const c = await f.webhooks.createEndpoint('acme', {
          url: hugeError.url,
          webhookSubscriptions: ['customer_create'],
        });
        await customer(f);
        f.webhooks = f.make({ timeoutMs: 20_000, concurrency: 1 });
        const summary = await f.webhooks.deliverDue();
        expect(summary).toMatchObject({ processed: 3, delivered: 1, retried: 2 });
        expect(elsewhere.hits).toHaveLength(0);
        expect(redirecting.hits).toHaveLength(1);
        const byEndpoint = new Map((await f.webhooks.list('acme')).map((w) => [w.endpointId, w]));
        expect(byEndpoint.get(a.id)).toMatchObject({ status: 'pending', lastError: '302 Found (retry 1 of 5)' });
        expect(byEndpoint.get(b.id)).toMatchObject({ status: 'successful' });
        expect(byEndpoint.get(c.id)).toMatchObject({
          status: 'pending',
          lastError: '500 Internal Server Error (retry 1 of 5)',
        });
        // Both endless bodies were cut off by the worker long before the receiver's own limit (the
        // close reaches the server a moment after the worker moved on: wait for it, boundedly).
        for (let i = 0; i < 1_500 && cutOff < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(cutOff).toBe(2);
      });
    });

    describe('endpoint health', () => {
      it('pauses an endpoint after 25 failures, counts one failure per 2 h while paused, disables it past 50', async () => {
        const f = fixture();
        const { site: acme } = await site(f);
        const receiver = await f.receiver((hit, res) => answer(res, hit, 500));
        const endpoint = await f.webhooks.createEndpoint('acme', {
          url: receiver.url,
          webhookSubscriptions: ['customer_create'],
        });
        for (let i = 0; i < 55; i++) await customer(f);
        const worker = f.make({ retrySchedule: [], concurrency: 1 });
        expect(await worker.deliverDue({ limit: 25 })).toMatchObject({ processed: 25, gaveUp: 25 });
        expect(await worker.getEndpoint('acme', endpoint.id)).toMatchObject({ status: 'enabled', failureCount: 25 });
        expect((await worker.list('acme', { status: 'failed' }))[0]!.lastError).toBe(
          '500 Internal Server Error (retry 1 of 1)',
        );
        expect(await worker.deliverDue({ limit: 1 })).toMatchObject({ processed: 1, retried: 1 });
        expect(await worker.getEndpoint('acme', endpoint.id)).toMatchObject({ status: 'paused', failureCount: 26 });

        // A webhook for a paused endpoint is created paused: first tried 2 h later.
        await customer(f);
        const [paused] = await worker.list('acme', { perPage: 1 });
        const [due] = await openDeliveries(f, acme.id, paused!.id);
        expect(due!.dueAt.toISOString()).toBe('2026-03-02T17:00:00.000Z');

        // The 29 webhooks queued before the pause fail as well, but a paused endpoint counts at most
        // one failure per 2 h: a burst queued for a receiver that went down cannot disable it.
        expect(await worker.deliverDue()).toMatchObject({ processed: 29, retried: 29, gaveUp: 0 });
        expect(await worker.getEndpoint('acme', endpoint.id)).toMatchObject({ status: 'paused', failureCount: 26 });

        // Every 2 h each held webhook is tried again and one failure counts, however many workers send
        // at once: 24 tries over 48 h, after which every webhook has given up (retry 24 of 24) and
        // the endpoint stands at 50.
        const parallel = f.make({ retrySchedule: [], concurrency: 8 });
        for (let round = 1; round <= 24; round++) {
          f.clock.advance({ hours: 2 });
          await parallel.deliverDue();
          expect((await worker.getEndpoint('acme', endpoint.id)).failureCount).toBe(26 + round);
        }
        expect(await worker.getEndpoint('acme', endpoint.id)).toMatchObject({ status: 'paused', failureCount: 50 });
        expect(await worker.list('acme', { status: 'pending' })).toEqual([]);
        expect((await worker.get('acme', paused!.id)).lastError).toBe('500 Internal Server Error (retry 24 of 24)');
        // 26 attempts before the pause, the 29 queued ones at once, then 23 rounds of all 31 (the 26th
        // and the one created paused included), and the last round the one created paused alone.
        expect(receiver.hits).toHaveLength(26 + 29 + 23 * 31 + 1);

        // The 51st failure disables the endpoint: the webhook queued behind it is refused unsent, and
        // no more webhooks are generated for it.
        await customer(f);
        await customer(f);
        f.clock.advance({ hours: 2 });
        expect(await worker.deliverDue()).toMatchObject({ processed: 2, gaveUp: 2 });
        expect(await worker.getEndpoint('acme', endpoint.id)).toMatchObject({ status: 'disabled', failureCount: 51 });
        const [refused] = await worker.list('acme', { status: 'failed', perPage: 1 });
        expect(refused).toMatchObject({ attempts: 0, lastError: 'Endpoint disabled after 51 consecutive failures.' });
        expect(receiver.hits).toHaveLength(26 + 29 + 23 * 31 + 1 + 1);
        const before = (await worker.list('acme', { perPage: 200 })).length;
        await customer(f);
        expect(await worker.list('acme', { perPage: 200 })).toHaveLength(before);

        // A successful test resets the count and enables the endpoint again, and its recovery queues
        // again what gave up in the 48 h (and 295 s) before: the last two webhooks, with their ids;
        // the others are 50 h old and stay failed (a replay still sends them).
        receiver.reply = ok;
        expect(await worker.sendTest('acme', endpoint.id)).toMatchObject({ status: 'successful' });
        expect(await worker.getEndpoint('acme', endpoint.id)).toMatchObject({ status: 'enabled', failureCount: 0 });
        const requeued = await worker.list('acme', { status: 'pending' });
        expect(requeued.map((w) => w.id)).toEqual([refused!.id, refused!.id - 1]);
        expect(await worker.list('acme', { status: 'failed', perPage: 200 })).toHaveLength(56);
        await customer(f);
        expect(await worker.deliverDue()).toMatchObject({ processed: 3, delivered: 3 });
        for (const w of requeued) expect(receiver.accepted().get(String(w.id))).toBe(1);
        expect(receiver.accepted().size).toBe(4);
      }, 60_000);

      it('retries a paused endpoint every 2 hours, and a URL change resets the failure count', async () => {
        const f = fixture();
        const { site: acme } = await site(f);
        const receiver = await f.receiver((hit, res) => answer(res, hit, 500));
        const worker = f.make({ endpointHealth: { pauseAfter: 1, disableAfter: 3 } });
        const endpoint = await worker.createEndpoint('acme', {
          url: `${receiver.url}/a`,
          webhookSubscriptions: ['customer_create'],
        });
        await customer(f);
        const [webhook] = await worker.list('acme');
        await worker.deliverDue();
        f.clock.advance({ seconds: 10 });
        await worker.deliverDue();
        expect(await worker.getEndpoint('acme', endpoint.id)).toMatchObject({ status: 'paused', failureCount: 2 });
        expect((await worker.get('acme', webhook!.id)).lastError).toBe('500 Internal Server Error (retry 2 of 24)');
        const [due] = await openDeliveries(f, acme.id, webhook!.id);
        expect(due!.dueAt.toISOString()).toBe('2026-03-02T17:00:10.000Z');
        f.clock.advance({ hours: 2 });
        await worker.deliverDue();
        expect(await worker.getEndpoint('acme', endpoint.id)).toMatchObject({ status: 'paused', failureCount: 3 });
        const moved = await worker.updateEndpoint('acme', endpoint.id, { url: `${receiver.url}/b` });
        expect(moved).toMatchObject({ status: 'enabled', failureCount: 0, url: `${receiver.url}/b` });
        const same = await worker.updateEndpoint('acme', endpoint.id, {
          url: `${receiver.url}/b`,
          webhookSubscriptions: ['customer_update'],
        });
        expect(same).toMatchObject({ failureCount: 0, events: ['customer_update'] });
        expect(receiver.hits.map((h) => h.path)).toEqual(['/a', '/a', '/a']);
      });
    });

    describe('endpoints and URL rules', () => {
      it('rejects bad endpoint URLs with clear messages', async () => {
        const f = fixture();
        await site(f, 'testsite');
        await f.sites.create({ subdomain: 'livesite', currency: 'USD', mode: 'live' });
        const strict = f.make({ allowLocalReceivers: false });
        const local = f.make({ allowLocalReceivers: true });
        const events = ['customer_create'];
        const message = async (service: WebhookService, subdomain: string, url: unknown) =>
          (await rejection(service.createEndpoint(subdomain, { url: url as string, webhookSubscriptions: events })))
            .messages;
        expect(await message(strict, 'testsite', 'https://hooks.example.com:8080/billing')).toEqual([
          'Url: port 8080 is not allowed; use port 80 or 443.',
        ]);
        expect(await message(strict, 'testsite', 'http://127.0.0.1:8080/hook')).toEqual([
          'Url: must be publicly reachable; local receivers need the allowLocalReceivers engine option.',
        ]);
        expect(await message(strict, 'testsite', 'http://localhost/hook')).toHaveLength(1);
        expect(await message(strict, 'livesite', 'http://hooks.example.com/billing')).toEqual([
          'Url: must use HTTPS for a site in live mode.',
        ]);
        expect(await message(local, 'livesite', 'https://127.0.0.1:4443/hook')).toEqual([
          'Url: must be publicly reachable; local receivers are never allowed for a site in live mode.',
        ]);
        for (const url of [
          'http://10.0.0.5/',
          'http://192.168.1.20/',
          'http://169.254.169.254/latest',
          'http://[fd00::1]/',
          'http://intranet/',
          'http://printer.local/',
        ]) {
          expect((await message(local, 'testsite', url))[0]).toMatch(
            /^Url: must be publicly reachable; '.+' is a local or private address\.$/,
          );
        }
        expect(await message(strict, 'testsite', 'ftp://hooks.example.com/')).toEqual([
          'Url: must start with http:// or https://.',
        ]);
        expect(await message(strict, 'testsite', 'not a url')).toEqual(['Url: is not a valid URL.']);
        expect(await message(strict, 'testsite', '  ')).toEqual(['Url: cannot be blank.']);
        const both = await rejection(
          strict.createEndpoint('testsite', {
            url: 'http://x.example.com:81/',
            webhookSubscriptions: ['nope', 'customer_create', 'test'],
          }),
        );
        expect(both.messages).toEqual([
          'Url: port 81 is not allowed; use port 80 or 443.',
          "Webhook subscriptions: 'nope' is not a valid event.",
          "Webhook subscriptions: 'test' is not a valid event.",
        ]);
        expect(
          (
            await rejection(
              strict.createEndpoint('testsite', { url: 'https://x.example.com/', webhookSubscriptions: [] }),
            )
          ).messages,
        ).toEqual(['Webhook subscriptions: cannot be blank.']);

        expect(
          await strict.createEndpoint('testsite', {
            url: 'http://hooks.example.com/billing',
            webhookSubscriptions: events,
          }),
        ).toMatchObject({ status: 'enabled' });
        expect(
          await strict.createEndpoint('testsite', {
            url: 'https://hooks.example.com:443/x?sig={signature_hmac_sha_256}',
            webhookSubscriptions: events,
          }),
        ).toMatchObject({
          url: 'https://hooks.example.com:443/x?sig={signature_hmac_sha_256}',
        });
        expect(
          await strict.createEndpoint('livesite', {
            url: 'https://hooks.example.com/billing',
            webhookSubscriptions: events,
          }),
        ).toMatchObject({ status: 'enabled' });
        expect(
          await local.createEndpoint('testsite', { url: 'http://127.0.0.1:8080/hook', webhookSubscriptions: events }),
        ).toMatchObject({ status: 'enabled' });
        expect(await message(strict, 'testsite', 'http://hooks.example.com/billing')).toEqual([
          'Url: has already been taken.',
        ]);
        expect(await strict.listEndpoints('livesite')).toHaveLength(1);
        expect(await strict.listEndpoints('testsite')).toHaveLength(3);
      });

      it('refuses to send to a plain-HTTP or loopback URL once the site is live', async () => {
        const f = fixture();
        await site(f, 'golive');
        const receiver = await f.receiver();
        const plain = await f.webhooks.createEndpoint('golive', {
          url: receiver.url,
          webhookSubscriptions: ['site_update'],
        });
        const tls = await f.webhooks.createEndpoint('golive', {
          url: receiver.url.replace('http:', 'https:'),
          webhookSubscriptions: ['site_update'],
        });
        await f.sites.update('golive', { mode: 'live' });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 2, retried: 2 });
        expect(receiver.hits).toHaveLength(0);
        const errors = new Map((await f.webhooks.list('golive')).map((w) => [w.endpointId, w.lastError]));
        expect(errors.get(plain.id)).toBe(
          'Endpoint URL rejected: Url: must use HTTPS for a site in live mode. (retry 1 of 5)',
        );
        expect(errors.get(tls.id)).toBe(
          'Endpoint URL rejected: Url: must be publicly reachable; local receivers are never allowed for a site in live mode. (retry 1 of 5)',
        );
      });

      it('updates, lists and deletes endpoints; deliveries for a deleted endpoint are dropped unsent', async () => {
        const f = fixture();
        await site(f);
        await site(f, 'other');
        const receiver = await f.receiver();
        const one = await f.webhooks.createEndpoint('acme', {
          url: `${receiver.url}/one`,
          webhookSubscriptions: ['customer_create', 'customer_create'],
        });
        const two = await f.webhooks.createEndpoint('acme', {
          url: `${receiver.url}/two`,
          webhookSubscriptions: ['customer_update'],
        });
        expect(one.events).toEqual(['customer_create']);
        expect((await f.webhooks.listEndpoints('acme')).map((e) => e.id)).toEqual([one.id, two.id]);
        expect((await rejection(f.webhooks.getEndpoint('other', one.id))).code).toBe('not_found');
        expect(
          (await rejection(f.webhooks.updateEndpoint('acme', two.id, { url: `${receiver.url}/one` }))).messages,
        ).toEqual(['Url: has already been taken.']);
        await f.webhooks.updateEndpoint('acme', two.id, {
          webhookSubscriptions: ['customer_create', 'customer_update'],
        });
        const created = await customer(f);
        await f.customers.update('acme', created.id, { lastName: 'Byron' });
        expect((await f.webhooks.list('acme')).map((w) => `${w.endpointId}:${w.event}`).sort()).toEqual(
          [`${one.id}:customer_create`, `${two.id}:customer_create`, `${two.id}:customer_update`].sort(),
        );
        await f.webhooks.deleteEndpoint('acme', two.id);
        expect((await rejection(f.webhooks.deleteEndpoint('acme', two.id))).code).toBe('not_found');
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 3, delivered: 1, skipped: 2 });
        expect(receiver.hits.map((h) => h.path)).toEqual(['/one']);
        expect(await f.webhooks.list('acme')).toHaveLength(1);
      });

      it('creates no webhooks while the site has webhooks disabled', async () => {
        const f = fixture();
        await site(f);
        const receiver = await f.receiver();
        await f.webhooks.createEndpoint('acme', { url: receiver.url, webhookSubscriptions: ['customer_create'] });
        await f.sites.update('acme', { settings: { webhooksEnabled: false } });
        await customer(f);
        expect(await f.webhooks.list('acme')).toEqual([]);
        await f.sites.update('acme', { settings: { webhooksEnabled: true } });
        await customer(f);
        expect(await f.webhooks.list('acme')).toHaveLength(1);
        // Switched off again before delivery: the queued webhook is not sent.
        await f.sites.update('acme', { settings: { webhooksEnabled: false } });
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 1, gaveUp: 1 });
        expect(receiver.hits).toHaveLength(0);
        expect((await f.webhooks.list('acme'))[0]!.lastError).toBe('Webhooks are disabled for this site.');
      });

      it('lists webhooks by status and local creation date, newest first, one page at a time', async () => {
        const f = fixture();
        await site(f);
        // The first and third webhooks always fail, however often a recovery queues them again.
        const seen: string[] = [];
        const receiver = await f.receiver((hit, res) => {
          if (!seen.includes(hit.id!)) seen.push(hit.id!);
          answer(res, hit, seen.indexOf(hit.id!) % 2 === 0 ? 500 : 200);
        });
        await f.webhooks.createEndpoint('acme', { url: receiver.url, webhookSubscriptions: ['customer_create'] });
        const worker = f.make({ retrySchedule: [], concurrency: 1 });
        for (let day = 0; day < 4; day++) {
          await customer(f);
          await worker.deliverDue();
          f.clock.advance({ days: 1 });
        }
        const all = await worker.list('acme');
        expect(all.map((w) => w.id)).toEqual([...all.map((w) => w.id)].sort((a, b) => b - a));
        expect(all.map((w) => w.status)).toEqual(['successful', 'failed', 'successful', 'failed']);
        expect(await worker.list('acme', { status: 'successful' })).toHaveLength(2);
        // 2026-03-03 and 2026-03-04 in New York: the second and third webhooks.
        const middle = await worker.list('acme', { sinceDate: '2026-03-03', untilDate: '2026-03-04' });
        expect(middle.map((w) => w.id)).toEqual([all[1]!.id, all[2]!.id]);
        expect((await worker.list('acme', { page: 2, perPage: 3 })).map((w) => w.id)).toEqual([all[3]!.id]);
        expect((await rejection(worker.list('acme', { sinceDate: '2026-02-30' }))).messages).toEqual([
          'Since date: is not a valid date.',
        ]);
        expect((await rejection(worker.get('acme', 999_999))).code).toBe('not_found');
      });
    });

    describe('destinations: the send-time address check', () => {
      // Every outgoing connection of these tests is watched, and stopped before it connects unless
      // the test allows it, so nothing ever leaves the machine; names come from a ScriptedResolver.
      let observer: ConnectionObserver | undefined;
      const watch = (hosts: readonly string[], allow?: (host: string, address: string) => boolean) => {
        observer = new ConnectionObserver(hosts, allow).install();
        return observer;
      };
      afterEach(() => {
        observer?.uninstall();
        observer = undefined;
      });
      const REFUSAL_HINT = '; loopback needs the allowLocalReceivers engine option on a test-mode site';

      it('refuses names that resolve to loopback, private or transition addresses, and records why', async () => {
        const f = fixture();
        await site(f);
        const dns = new ScriptedResolver({
          'loop4.example.com': [['127.0.0.1']],
          'loop6.example.com': [['::1']],
          'mapped.example.com': [['::ffff:127.0.0.1']],
          'nat64.example.com': [['64:ff9b::7f00:1']],
          'private.example.com': [['10.0.0.1']],
          'mixed.example.com': [['93.184.216.34', '10.0.0.1']],
          'metadata.example.com': [['169.254.169.254']],
          'public.example.com': [['93.184.216.34']],
        });
        const strict = f.make({ allowLocalReceivers: false, resolve: dns.resolve });
        const hosts = new Map<number, string>();
        for (const host of ['loop4', 'loop6', 'mapped', 'nat64', 'private', 'mixed', 'metadata', 'public'].map(
          (name) => `${name}.example.com`,
        )) {
          const endpoint = await strict.createEndpoint('acme', {
            url: `http://${host}/hook`,
            webhookSubscriptions: ['customer_create'],
          });
          hosts.set(endpoint.id, host);
        }
        const watcher = watch([...hosts.values()]);
        await customer(f);
        // Every refusal is a failed attempt like any other: retried, counted, never a worker error.
        expect(await strict.deliverDue()).toEqual({
          processed: 8,
          delivered: 0,
          retried: 8,
          gaveUp: 0,
          skipped: 0,
          errors: 0,
        });
        const errors = new Map((await strict.list('acme')).map((w) => [hosts.get(w.endpointId), w.lastError]));
        expect(Object.fromEntries(errors)).toEqual({
          'loop4.example.com': `Destination refused: loop4.example.com resolves to 127.0.0.1 (loopback${REFUSAL_HINT}). (retry 1 of 5)`,
          'loop6.example.com': `Destination refused: loop6.example.com resolves to ::1 (loopback${REFUSAL_HINT}). (retry 1 of 5)`,
          'mapped.example.com':
            'Destination refused: mapped.example.com resolves to ::ffff:7f00:1 (ipv4Mapped, embedding 127.0.0.1 (loopback)). (retry 1 of 5)',
          'nat64.example.com':
            'Destination refused: nat64.example.com resolves to 64:ff9b::7f00:1 (nat64, embedding 127.0.0.1 (loopback)). (retry 1 of 5)',
          'private.example.com':
            'Destination refused: private.example.com resolves to 10.0.0.1 (private). (retry 1 of 5)',
          'mixed.example.com': 'Destination refused: mixed.example.com resolves to 10.0.0.1 (private). (retry 1 of 5)',
          'metadata.example.com':
            'Destination refused: metadata.example.com resolves to 169.254.169.254 (linkLocal). (retry 1 of 5)',
          // The public name passed the check: its socket was handed the checked address (and stopped there by the test).
          'public.example.com': `Connection failed: ${BLOCKED} (retry 1 of 5)`,
        });
        for (const host of hosts.values()) expect(dns.count(host), host).toBe(1);
        expect(watcher.lookups).toEqual([{ host: 'public.example.com', address: '93.184.216.34', allowed: false }]);
        expect(watcher.connections).toEqual([]);
        for (const endpoint of await strict.listEndpoints('acme')) expect(endpoint.failureCount).toBe(1);
        // Each retry resolves again and is judged again.
        f.clock.advance({ seconds: 10 });
        expect(await strict.deliverDue()).toMatchObject({ processed: 8, retried: 8, errors: 0 });
        for (const host of hosts.values()) expect(dns.count(host), host).toBe(2);
        expect(watcher.lookups.map((l) => l.address)).toEqual(['93.184.216.34', '93.184.216.34']);
      });

      it('connects a name that resolves to loopback only with allowLocalReceivers, to the address it checked', async () => {
        const f = fixture();
        await site(f);
        await f.sites.create({ subdomain: 'livesite', currency: 'USD', mode: 'live' });
        const receiver = await f.receiver();
        const port = Number(new URL(receiver.url).port);
        // localhost answers loopback once, then a private address: a second lookup would show.
        const dns = new ScriptedResolver({
          localhost: [['127.0.0.1'], ['10.0.0.1']],
          'hooks.example.com': [['127.0.0.1']],
        });
        const local = f.make({ allowLocalReceivers: true, resolve: dns.resolve });
        const strict = f.make({ allowLocalReceivers: false, resolve: dns.resolve });
        const named = await local.createEndpoint('acme', {
          url: `http://localhost:${port}/named`,
          webhookSubscriptions: ['customer_create'],
        });
        const watcher = watch(['localhost', 'hooks.example.com'], (host) => host === 'localhost');
        await customer(f);
        expect(await local.deliverDue()).toMatchObject({ processed: 1, delivered: 1, errors: 0 });
        expect(receiver.hits.map((h) => [h.path, h.headers.host])).toEqual([['/named', `localhost:${port}`]]);
        expect(watcher.lookups).toEqual([{ host: 'localhost', address: '127.0.0.1', allowed: true }]);
        expect(watcher.connections).toEqual([{ address: '127.0.0.1', port }]);
        expect(dns.calls).toEqual(['localhost']);
        // The next send resolves once more, gets the private address, and is refused before any socket.
        const test = await local.sendTest('acme', named.id);
        expect(test).toMatchObject({
          status: 'failed',
          lastError: 'Destination refused: localhost resolves to 10.0.0.1 (private). (retry 1 of 1)',
        });
        expect(dns.calls).toEqual(['localhost', 'localhost']);
        expect(receiver.hits).toHaveLength(1);
        expect(watcher.connections).toHaveLength(1);

        // A made-up public-looking name that resolves to loopback: connected to (127.0.0.1, stopped
        // by the test before port 80 is reached) with the option, refused without it.
        const made = await local.createEndpoint('acme', {
          url: 'http://hooks.example.com/made-up',
          webhookSubscriptions: ['customer_create'],
        });
        await local.deleteEndpoint('acme', named.id);
        await customer(f);
        expect((await local.sendTest('acme', made.id)).lastError).toBe(`Connection failed: ${BLOCKED} (retry 1 of 1)`);
        expect(watcher.lookups.at(-1)).toEqual({ host: 'hooks.example.com', address: '127.0.0.1', allowed: false });
        expect((await strict.sendTest('acme', made.id)).lastError).toBe(
          `Destination refused: hooks.example.com resolves to 127.0.0.1 (loopback${REFUSAL_HINT}). (retry 1 of 1)`,
        );
        // Never on a live site, whatever the option says.
        const live = await local.createEndpoint('livesite', {
          url: 'https://hooks.example.com/live',
          webhookSubscriptions: ['customer_create'],
        });
        expect((await local.sendTest('livesite', live.id)).lastError).toBe(
          `Destination refused: hooks.example.com resolves to 127.0.0.1 (loopback${REFUSAL_HINT}). (retry 1 of 1)`,
        );
        expect(watcher.lookups.filter((l) => l.host === 'hooks.example.com')).toHaveLength(1);
        expect(dns.count('hooks.example.com')).toBe(3);
        expect(receiver.hits).toHaveLength(1);
      });

      it('looks a name up once per send: a public answer followed by loopback never reaches loopback', async () => {
        const f = fixture();
        await site(f);
        const receiver = await f.receiver();
        const dns = new ScriptedResolver({ 'rebind.example.com': [['93.184.216.34'], ['127.0.0.1']] });
        const strict = f.make({ allowLocalReceivers: false, resolve: dns.resolve });
        await strict.createEndpoint('acme', {
          url: 'http://rebind.example.com/hook',
          webhookSubscriptions: ['customer_create'],
        });
        const watcher = watch(['rebind.example.com']);
        await customer(f);
        expect(await strict.deliverDue()).toMatchObject({ processed: 1, retried: 1, errors: 0 });
        // One lookup, and the socket was handed the public address it checked, not a fresh answer.
        expect(dns.count('rebind.example.com')).toBe(1);
        expect(watcher.lookups).toEqual([{ host: 'rebind.example.com', address: '93.184.216.34', allowed: false }]);
        // The retry resolves again, now to loopback: judged and refused before any socket exists.
        f.clock.advance({ seconds: 10 });
        expect(await strict.deliverDue()).toMatchObject({ processed: 1, retried: 1, errors: 0 });
        expect(dns.count('rebind.example.com')).toBe(2);
        expect(watcher.lookups).toHaveLength(1);
        expect([...watcher.lookups, ...watcher.connections].some((c) => c.address === '127.0.0.1')).toBe(false);
        expect(receiver.hits).toHaveLength(0);
        expect((await strict.list('acme'))[0]!.lastError).toBe(
          `Destination refused: rebind.example.com resolves to 127.0.0.1 (loopback${REFUSAL_HINT}). (retry 2 of 5)`,
        );
      });

      it('records a failed or empty lookup as a failed delivery and keeps delivering the rest', async () => {
        const f = fixture();
        await site(f);
        const receiver = await f.receiver();
        const dns = new ScriptedResolver({ 'empty.example.com': [[]] });
        const worker = f.make({ allowLocalReceivers: true, resolve: dns.resolve, concurrency: 1 });
        const missing = await worker.createEndpoint('acme', {
          url: 'http://missing.example.com/',
          webhookSubscriptions: ['customer_create'],
        });
        const empty = await worker.createEndpoint('acme', {
          url: 'http://empty.example.com/',
          webhookSubscriptions: ['customer_create'],
        });
        const good = await worker.createEndpoint('acme', {
          url: receiver.url,
          webhookSubscriptions: ['customer_create'],
        });
        await customer(f);
        expect(await worker.deliverDue()).toEqual({
          processed: 3,
          delivered: 1,
          retried: 2,
          gaveUp: 0,
          skipped: 0,
          errors: 0,
        });
        const byEndpoint = new Map((await worker.list('acme')).map((w) => [w.endpointId, w]));
        expect(byEndpoint.get(missing.id)!.lastError).toBe('Connection failed: ENOTFOUND (retry 1 of 5)');
        expect(byEndpoint.get(empty.id)!.lastError).toBe(
          'Destination refused: empty.example.com has no address. (retry 1 of 5)',
        );
        expect(byEndpoint.get(good.id)).toMatchObject({ status: 'successful', lastError: null });
        // A literal address is judged as it is: the resolver is never asked for it.
        expect(dns.calls).toEqual(['missing.example.com', 'empty.example.com']);
        expect(receiver.hits).toHaveLength(1);
      });
    });

    describe('atomicity', () => {
      it('creates no webhook, delivery or event for a rejected command or a failed commit', async () => {
        const f = fixture();
        await site(f);
        const receiver = await f.receiver();
        await f.webhooks.createEndpoint('acme', {
          url: receiver.url,
          webhookSubscriptions: ['customer_create', 'customer_update'],
        });
        await customer(f, 'acme', 'taken');
        f.heard.length = 0;
        expect((await rejection(customer(f, 'acme', 'taken'))).code).toBe('validation');
        expect((await rejection(f.customers.create('acme', { firstName: '', lastName: '', email: 'bad' }))).code).toBe(
          'validation',
        );
        f.storage.failNextCommit();
        await expect(customer(f, 'acme', 'never')).rejects.toThrow('commit failed');
        expect(f.heard).toEqual([]);
        expect(await f.webhooks.list('acme')).toHaveLength(1);
        expect(await f.webhooks.deliverDue()).toMatchObject({ processed: 1, delivered: 1 });
        expect(receiver.hits).toHaveLength(1);
        expect(receiver.hits[0]!.body).toContain('payload[customer][reference]=taken&');
      });
    });

    describe('concurrent workers', () => {
      it('delivers a backlog of 1,000 webhooks with two workers, each webhook exactly once', async () => {
        const f = fixture();
        const { site: acme } = await site(f);
        const inFlight = new Set<string>();
        const overlaps: string[] = [];
        const receiver = await f.receiver((hit, res) => {
          if (inFlight.has(hit.id!)) overlaps.push(hit.id!);
          inFlight.add(hit.id!);
          // Answer on a later turn so deliveries really overlap in time.
          setImmediate(() => {
            inFlight.delete(hit.id!);
            answer(res, hit, 200);
          });
        });
        await f.webhooks.createEndpoint('acme', { url: receiver.url, webhookSubscriptions: ['site_update'] });
        await runCommand(f.deps, async (ctx) => {
          for (let i = 0; i < 1000; i++) {
            ctx.record({
              siteId: acme.id,
              key: 'site_update',
              subjectType: 'site',
              subjectId: acme.id,
              payload: { site: { id: acme.id }, n: i },
            });
          }
        });
        const ids = (await f.webhooks.list('acme', { perPage: 200 })).length;
        expect(ids).toBe(200);
        const one = f.make({ batchSize: 20, concurrency: 4 });
        const two = f.make({ batchSize: 20, concurrency: 4 });
        const [a, b] = await Promise.all([one.deliverDue(), two.deliverDue()]);
        expect(a.delivered + b.delivered).toBe(1000);
        expect(a.delivered).toBeGreaterThan(0);
        expect(b.delivered).toBeGreaterThan(0);
        expect(a.errors + b.errors).toBe(0);
        expect(overlaps).toEqual([]);
        expect(receiver.hits).toHaveLength(1000);
        const accepted = receiver.accepted();
        expect(accepted.size).toBe(1000);
        expect([...accepted.values()].every((n) => n === 1)).toBe(true);
        const stored: string[] = [];
        for (let page = 1; page <= 5; page++)
          stored.push(
            ...(await f.webhooks.list('acme', { page, perPage: 200, status: 'successful' })).map((w) => String(w.id)),
          );
        expect(stored.sort()).toEqual([...accepted.keys()].sort());
        expect(await one.deliverDue()).toMatchObject({ processed: 0 });
      });
    });
  });
}
