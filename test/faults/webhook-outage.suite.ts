import {
  type BillingEngine,
  createBillingEngine,
  createTestGateway,
  type DeliverySummary,
  ManualClock,
  type Storage,
} from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { SUBSCRIBABLE_EVENT_KEYS } from '../../src/domain/webhooks/index.js';
import type { OutboxEventRecord, WebhookRecord } from '../../src/ports/storage.js';
import { verifyWebhook, webhookSignatureFrom } from '../../src/webhook-receiver.js';
import { answer, Receiver } from '../support/loopback-receiver.js';

// ---------------------------------------------------------------------------------------------
// A loopback receiver on 127.0.0.1 that can answer 503 or be down (connection refused) on demand.

type Mode = 'up' | 'unavailable' | 'down';

/** One request the receiver got, what it answered, and whether its signature verified. */
interface Hit {
  readonly id: string | undefined;
  readonly eventId: string | undefined;
  readonly body: string;
  readonly signatureValid: boolean;
  readonly status: number;
}

/** The shared loopback receiver, answering 503 while `mode` is not `up`, with signatures checked. */
class OutageReceiver {
  mode: Mode = 'up';
  readonly #receiver: Receiver;
  readonly #sharedKey: () => string;

  constructor(sharedKey: () => string) {
    this.#sharedKey = sharedKey;
    this.#receiver = new Receiver((hit, res) => answer(res, hit, this.mode === 'up' ? 200 : 503));
  }

  get url(): string {
    return `${this.#receiver.url}/hooks`;
  }

  get hits(): Hit[] {
    return this.#receiver.hits.map((hit) => {
      const verified = verifyWebhook({
        rawBody: hit.body,
        signature: webhookSignatureFrom(hit.headers),
        sharedKey: this.#sharedKey(),
      });
      const eventId = verified.ok ? verified.payload.event_id : undefined;
      return {
        id: hit.id,
        eventId: typeof eventId === 'string' ? eventId : undefined,
        body: hit.body,
        signatureValid: verified.ok,
        status: hit.status ?? 0,
      };
    });
  }

  async start(): Promise<void> {
    await this.#receiver.start();
  }

  /** Stops listening and drops every connection: connections are refused until `start` again (same port). */
  stop(): Promise<void> {
    return this.#receiver.stop();
  }

  /** Accepted (200) hits per webhook id. */
  accepted(): Map<string, number> {
    return this.#receiver.accepted();
  }
}

// ---------------------------------------------------------------------------------------------

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** A month before the outage: the book signs up (sixteen at one instant, so their renewals come in a burst). */
const SIGNUP_AT = Date.parse('2026-02-02T15:00:00Z');
/**
 * The receiver is down from here for one hour: connections refused for 20 minutes, then 503 for
 * 40. Its first webhooks give up on the fast schedule (five attempts in five minutes) before the
 * endpoint is paused; the book's burst of renewals comes at 15:00, in the 503 half.
 */
const OUTAGE_START = Date.parse('2026-03-02T14:40:00Z');
const OUTAGE_END = OUTAGE_START + HOUR;
/** Reference §3.3: a paused endpoint is retried every 2 hours. */
const PAUSED_RETRY = 2 * HOUR;
/** The run goes on this long after the recovery, one tick a minute. */
const AFTER_RECOVERY = PAUSED_RETRY + 30 * MINUTE;
const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2035 };
const REFUSED_MINUTES = 20;
const BURST = 16;
const SPREAD = 8;

/** A receiver down for an hour of simulated time while the book keeps producing events, on one adapter. */
export function webhookOutageSuite(harness: StorageHarness): void {
  describe(`webhook receiver outage (${harness.name})`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it('delivers every event exactly once, signed, to a receiver that was down for an hour', async () => {
      const storage: Storage = await harness.create();
      cleanups.push(() => (harness.destroy ? harness.destroy(storage) : storage.close()));
      const clock = new ManualClock(SIGNUP_AT - HOUR);
      const engine: BillingEngine = createBillingEngine({
        storage,
        clock,
        gateway: createTestGateway(),
        webhooks: { allowLocalReceivers: true, timeoutMs: 2000 },
      });
      let sharedKey = '';
      const receiver = new OutageReceiver(() => sharedKey);
      await receiver.start();
      cleanups.push(() => receiver.stop());

      const created = await engine.sites.create({ subdomain: 'hooks', currency: 'USD', timeZone: 'America/New_York' });
      sharedKey = created.sharedKey;
      const siteId = created.site.id;
      const site = engine.site('hooks');
      const endpoint = await site.webhooks.createEndpoint({
        url: receiver.url,
        webhookSubscriptions: [...SUBSCRIBABLE_EVENT_KEYS],
      });
      const family = await site.catalog.createFamily({ name: 'Plans' });
      await site.catalog.createProduct(family.id, {
        name: 'Basic',
        handle: 'basic',
        priceInCents: 1900,
        interval: 1,
        intervalUnit: 'month',
      });
      let signups = 0;
      const signUp = async () => {
        signups += 1;
        const { subscription } = await site.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'Hook', lastName: `Customer ${signups}`, email: `hook${signups}@example.com` },
          creditCard: VISA,
        });
        return subscription.id;
      };

      /** Totals of every `deliverWebhooks` call, and the endpoint's states and highest failure count seen. */
      const totals = { processed: 0, delivered: 0, retried: 0, gaveUp: 0, skipped: 0, errors: 0 };
      const seen = { statuses: new Set<string>(), maxFailures: 0 };
      let connectionFailures = 0;
      let down = false;
      const tick = async () => {
        await engine.runDue();
        const summary: DeliverySummary = await engine.deliverWebhooks();
        for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += summary[key];
        if (down) connectionFailures += summary.retried + summary.gaveUp;
        const now = await site.webhooks.getEndpoint(endpoint.id);
        seen.statuses.add(now.status);
        seen.maxFailures = Math.max(seen.maxFailures, now.failureCount);
      };

      // A month before: the book signs up (a burst of sixteen at one instant, then one every five minutes).
      clock.set(SIGNUP_AT);
      const ids: number[] = [];
      for (let i = 0; i < BURST; i++) ids.push(await signUp());
      for (let i = 0; i < SPREAD; i++) {
        clock.advance({ minutes: 5 });
        ids.push(await signUp());
        await tick();
      }
      await tick();
      const beforeOutage = receiver.accepted().size;
      expect(beforeOutage).toBeGreaterThan(0);
      expect(receiver.hits.every((h) => h.status === 200)).toBe(true);

      // The outage: one tick a minute. While connections are refused, two one-time charges (one
      // webhook each, which gives up after five attempts); from 15:00 the burst of renewals, a
      // signup every four minutes and a charge every six.
      clock.set(OUTAGE_START - 30 * MINUTE);
      await tick();
      const hitsBefore = receiver.hits.length;
      const outageOutbox = (await outbox(storage, siteId)).at(-1)!.id;
      const charges: number[] = [];
      for (let at = OUTAGE_START; at < OUTAGE_END; at += MINUTE) {
        clock.set(at);
        const minute = (at - OUTAGE_START) / MINUTE;
        if (minute === 0) {
          down = true;
          await receiver.stop();
        }
        if (minute === REFUSED_MINUTES) {
          down = false;
          receiver.mode = 'unavailable';
          await receiver.start();
        }
        const busy = minute >= REFUSED_MINUTES;
        if (busy && minute % 4 === 2) ids.push(await signUp());
        if (minute === 1 || minute === 9 || (busy && minute % 6 === 3)) {
          const charge = await site.ledger.charge(ids[minute % ids.length]!, {
            amountInCents: 500 + minute,
            memo: `Outage charge ${minute}`,
          });
          charges.push(charge.id);
        }
        await tick();
      }
      const duringOutage = receiver.hits.slice(hitsBefore);
      const unavailableAttempts = duringOutage.filter((h) => h.status === 503).length;
      const endpointAtRecovery = await site.webhooks.getEndpoint(endpoint.id);
      const atRecovery = await webhooks(storage, siteId);
      const failedAtRecovery = atRecovery.filter((w) => w.status === 'failed').length;
      const heldAtRecovery = atRecovery.filter((w) => w.status === 'pending').length;
      const producedDuringOutage = (await outbox(storage, siteId)).filter((e) => e.id > outageOutbox).length;

      // The receiver recovers (same port); the engine keeps ticking every minute.
      clock.set(OUTAGE_END);
      receiver.mode = 'up';
      let recoveredAt: number | undefined;
      for (let at = OUTAGE_END; at <= OUTAGE_END + AFTER_RECOVERY; at += MINUTE) {
        clock.set(at);
        await tick();
        const pending = (await webhooks(storage, siteId)).some((w) => w.status !== 'successful');
        if (!pending && recoveredAt === undefined) recoveredAt = at;
      }

      const figures = {
        events: (await outbox(storage, siteId)).length,
        webhooks: (await webhooks(storage, siteId)).length,
        producedDuringOutage,
        unavailableAttempts,
        connectionFailures,
        endpointAtRecovery: { status: endpointAtRecovery.status, failureCount: endpointAtRecovery.failureCount },
        endpointStatuses: [...seen.statuses],
        maxFailureCount: seen.maxFailures,
        failedAtRecovery,
        heldAtRecovery,
        allDeliveredMinutesAfterRecovery: recoveredAt === undefined ? null : (recoveredAt - OUTAGE_END) / MINUTE,
        totals,
        hits: receiver.hits.length,
      };
      console.log(`[webhook outage ${harness.name}] ${JSON.stringify(figures)}`);

      // The outage was real and hit every path: refused connections and 503s, events produced
      // throughout, webhooks that gave up on the fast schedule before the endpoint was paused, and
      // webhooks held for the paused retry. The endpoint was never disabled.
      expect(connectionFailures).toBeGreaterThan(0);
      expect(unavailableAttempts).toBeGreaterThan(0);
      expect(producedDuringOutage).toBeGreaterThan(BURST * 2);
      expect(charges.length).toBeGreaterThan(2);
      expect(endpointAtRecovery.status).toBe('paused');
      expect(failedAtRecovery).toBeGreaterThan(0);
      expect(heldAtRecovery).toBeGreaterThan(0);
      expect(seen.statuses.has('disabled')).toBe(false);

      // Every event of the site became one webhook for the endpoint: none was left ungenerated.
      const events = (await outbox(storage, siteId)).filter((e) => e.key !== 'test');
      const all = await webhooks(storage, siteId);
      expect(all.map((w) => w.eventId ?? -1).sort(byNumber)).toEqual(events.map((e) => e.id).sort(byNumber));
      expect(all.every((w) => w.endpointId === endpoint.id)).toBe(true);

      // The receiver accepted every webhook exactly once by id, every request was signed
      // correctly, and every request for one id carried the same body (retries resend it as is).
      const accepted = receiver.accepted();
      expect([...accepted.keys()].sort()).toEqual(all.map((w) => String(w.id)).sort());
      expect([...accepted.values()].every((n) => n === 1)).toBe(true);
      expect(receiver.hits.every((h) => h.signatureValid)).toBe(true);
      const bodyOf = new Map(all.map((w) => [String(w.id), w.body]));
      expect(receiver.hits.every((h) => h.id !== undefined && h.body === bodyOf.get(h.id))).toBe(true);
      const receivedEvents = receiver.hits.filter((h) => h.status === 200).map((h) => Number(h.eventId));
      expect(receivedEvents.sort(byNumber)).toEqual(events.map((e) => e.id).sort(byNumber));

      // Everything arrived within one paused-retry interval of the recovery, and the endpoint is healthy.
      expect(all.every((w) => w.status === 'successful')).toBe(true);
      expect(recoveredAt).toBeDefined();
      expect(recoveredAt! - OUTAGE_END).toBeLessThanOrEqual(PAUSED_RETRY + 2 * MINUTE);
      expect(await site.webhooks.getEndpoint(endpoint.id)).toMatchObject({ status: 'enabled', failureCount: 0 });
    }, 120_000);

    it('queues again on recovery only what gave up in the outage window, with the same id and body', async () => {
      const storage: Storage = await harness.create();
      cleanups.push(() => (harness.destroy ? harness.destroy(storage) : storage.close()));
      const clock = new ManualClock(OUTAGE_START);
      // One attempt per webhook, so each failure gives up at once.
      const engine = createBillingEngine({
        storage,
        clock,
        webhooks: { allowLocalReceivers: true, timeoutMs: 2000, retrySchedule: [] },
      });
      let sharedKey = '';
      const receiver = new OutageReceiver(() => sharedKey);
      await receiver.start();
      cleanups.push(() => receiver.stop());
      const created = await engine.sites.create({ subdomain: 'window', currency: 'USD' });
      sharedKey = created.sharedKey;
      const site = engine.site('window');
      const endpoint = await site.webhooks.createEndpoint({
        url: receiver.url,
        webhookSubscriptions: ['customer_create'],
      });
      let n = 0;
      const customer = async () => {
        n += 1;
        await site.customers.create({ firstName: 'W', lastName: `${n}`, email: `w${n}@example.com` });
        const [newest] = await site.webhooks.list({ perPage: 1 });
        return newest!;
      };

      receiver.mode = 'unavailable';
      const old = await customer();
      await engine.deliverWebhooks();
      const test = await site.webhooks.sendTest(endpoint.id);
      const refused = await customer();
      await engine.sites.update('window', { settings: { webhooksEnabled: false } });
      await engine.deliverWebhooks();
      await engine.sites.update('window', { settings: { webhooksEnabled: true } });
      expect(await site.webhooks.get(refused.id)).toMatchObject({
        status: 'failed',
        lastError: 'Webhooks are disabled for this site.',
      });
      // Two days later (past the 48 h window for `old`), another webhook gives up.
      clock.advance({ hours: 49 });
      const recent = await customer();
      await engine.deliverWebhooks();
      for (const w of [old, test, recent]) expect((await site.webhooks.get(w.id)).status).toBe('failed');
      expect(await site.webhooks.getEndpoint(endpoint.id)).toMatchObject({ status: 'enabled', failureCount: 2 });

      // The receiver is back: the next webhook succeeds and the recovery sends `recent` again in the same call.
      clock.advance({ minutes: 1 });
      receiver.mode = 'up';
      const next = await customer();
      expect(await engine.deliverWebhooks()).toMatchObject({ processed: 2, delivered: 2, retried: 0, gaveUp: 0 });
      expect(await site.webhooks.get(recent.id)).toMatchObject({ status: 'successful', attempts: 2 });
      expect(await site.webhooks.get(next.id)).toMatchObject({ status: 'successful', attempts: 1 });
      for (const w of [old, test, refused]) expect((await site.webhooks.get(w.id)).status).toBe('failed');
      expect([...receiver.accepted().keys()].sort()).toEqual([String(recent.id), String(next.id)].sort());
      const resent = receiver.hits.filter((h) => h.id === String(recent.id));
      expect(resent.map((h) => [h.status, h.body === recent.body, h.signatureValid])).toEqual([
        [503, true, true],
        [200, true, true],
      ]);
      // A second success is no recovery: nothing more is queued.
      await customer();
      expect(await engine.deliverWebhooks()).toMatchObject({ processed: 1, delivered: 1 });
    });
  });
}

function byNumber(a: number, b: number): number {
  return a - b;
}

async function outbox(storage: Storage, siteId: number): Promise<OutboxEventRecord[]> {
  return storage.transaction(async (tx) => {
    const out: OutboxEventRecord[] = [];
    for (let after = 0; ; ) {
      const page = await tx.outbox.listAfter(siteId, after, 500);
      out.push(...page);
      if (page.length < 500) return out;
      after = page.at(-1)!.id;
    }
  });
}

async function webhooks(storage: Storage, siteId: number): Promise<WebhookRecord[]> {
  return storage.transaction(async (tx) => {
    const out: WebhookRecord[] = [];
    for (let page = 1; ; page++) {
      const rows = await tx.webhooks.listWebhooks(siteId, {}, { page, perPage: 200 });
      out.push(...rows);
      if (rows.length < 200) return out;
    }
  });
}
