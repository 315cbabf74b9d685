import { randomUUID } from 'node:crypto';
import { fillSignatureTemplate, webhookSignatureHmacSha256, webhookSignatureMd5 } from '../domain/signing/index.js';
import { endOfLocalDay, parseLocalDate } from '../domain/time/index.js';
import {
  buildWebhookPayload,
  checkEndpointHealth,
  checkRetrySchedule,
  checkWebhookSubscriptions,
  checkWebhookUrl,
  countsAgainstPaused,
  DEFAULT_ENDPOINT_HEALTH,
  DEFAULT_RETRY_SCHEDULE_MS,
  deliveryErrorText,
  type EndpointHealthPolicy,
  endpointStatusFor,
  type ProductSnapshot,
  requeueWindowMs,
  retryDecision,
  type SubscriptionSnapshot,
  testWebhookBody,
  type WebhookCompat,
  type WebhookPayloadContext,
  type WebhookRetryPolicy,
  type WebhookSubjects,
  webhookBody,
  webhookPayloadNeeds,
} from '../domain/webhooks/index.js';
import { BillingError, invalid, notFound, ValidationCollector } from '../errors.js';
import type { BillingEvent } from '../events.js';
import type {
  CustomerRecord,
  DueWorkRecord,
  SiteRecord,
  StorageTransaction,
  TransactionRecord,
  WebhookEndpointRecord,
  WebhookFilter,
  WebhookRecord,
  WebhookStatus,
} from '../ports/storage.js';
import { type CommandDeps, runCommand } from './command-runner.js';
import { clampPage } from './customer-service.js';
import { loadSite } from './site-service.js';
import { sendWebhook, systemResolver, type WebhookResolver, type WebhookSendResult } from './webhook-sender.js';

/** Options of {@link WebhookService}. Every field has the reference's default. */
export interface WebhookServiceOptions {
  /**
   * Lets test-mode sites register loopback receivers (`127.0.0.1`, `[::1]`, `localhost`) on any
   * port, and send to hostnames that resolve to loopback addresses, for local development and
   * tests. Off by default; live sites never get it. Every other non-public address stays refused.
   */
  readonly allowLocalReceivers?: boolean;
  /** `chargify` adds the hosted service's `X-Chargify-*` headers and spellings; default `spec`. */
  readonly compat?: WebhookCompat;
  /**
   * Resolves an endpoint's hostname at each send, once; every address it returns is judged and
   * the connection goes to the checked one (docs/decisions.md, "Webhook destinations"). Default
   * `dns.promises.lookup(host, { all: true, verbatim: true })`. Tests inject one to map made-up
   * names without touching DNS.
   */
  readonly resolve?: WebhookResolver;
  /**
   * Replaces the built-in HTTP transport, for tests that must never leave the process. The engine
   * then neither resolves nor connects: where the request goes is up to this fetch, so the
   * send-time address check (`resolve`) does not apply, only the URL rules. Leave it unset in
   * production.
   */
  readonly fetch?: typeof fetch;
  /** How long a receiver has to answer, in ms (the service allows about 15 s); default 15000. */
  readonly timeoutMs?: number;
  /** Delays between attempts in ms; default 10 s, 15 s, 90 s, 180 s (five attempts). */
  readonly retrySchedule?: readonly number[];
  /** Failure thresholds and the paused retry cadence; default 25 / 50 failures, every 2 h, 24 tries. */
  readonly endpointHealth?: Partial<EndpointHealthPolicy>;
  /** At most this much of a response body is read; default 4096 bytes. */
  readonly maxResponseBytes?: number;
  /** Deliveries claimed per batch; default 50. */
  readonly batchSize?: number;
  /** Deliveries in flight at once per worker; default 8. */
  readonly concurrency?: number;
}

/** Input of {@link WebhookService.createEndpoint} and {@link WebhookService.updateEndpoint}. */
export interface WebhookEndpointInput {
  /** The receiver's URL (public, port 80 or 443, HTTPS on a live site); may contain `{signature_hmac_sha_256}`. */
  readonly url: string;
  /** The event keys this endpoint receives. */
  readonly webhookSubscriptions: readonly string[];
}

/** Query of {@link WebhookService.list}. Dates are local days in the site's zone, inclusive. */
export interface WebhookListQuery {
  readonly status?: WebhookStatus;
  /** `YYYY-MM-DD`. */
  readonly sinceDate?: string;
  /** `YYYY-MM-DD`. */
  readonly untilDate?: string;
  readonly endpointId?: number;
  readonly page?: number;
  /** Default 20, at most 200. */
  readonly perPage?: number;
}

/** A webhook as listed: the record's fields plus both signatures of its body under the site's current shared key. */
export interface WebhookView {
  readonly id: number;
  readonly endpointId: number;
  readonly event: string;
  /** The outbox event it carries; null for a test webhook. */
  readonly eventId: number | null;
  readonly body: string;
  /** Legacy MD5 of shared key + body. */
  readonly signature: string;
  readonly signatureHmacSha256: string;
  readonly status: WebhookStatus;
  readonly successful: boolean;
  /** Sends so far, over all retries and replays. */
  readonly attempts: number;
  readonly createdAt: Date;
  readonly acceptedAt: Date | null;
  readonly lastSentAt: Date | null;
  readonly lastSentUrl: string | null;
  readonly lastErrorAt: Date | null;
  /** `404 Resource Not Found (retry 5 of 5)` style. */
  readonly lastError: string | null;
}

/** Options of {@link WebhookService.deliverDue}. */
export interface DeliverDueOptions {
  /** Deliver what is due at or before this instant; default the clock's now. */
  readonly until?: Date;
  /** Stop after this many deliveries (default: no limit). */
  readonly limit?: number;
  /** Only this site's deliveries. */
  readonly siteId?: number;
}

/** What a {@link WebhookService.deliverDue} call did. `processed` counts every claimed delivery. */
export interface DeliverySummary {
  readonly processed: number;
  /** Answered 200. */
  readonly delivered: number;
  /** Failed and scheduled again. */
  readonly retried: number;
  /** Failed for the last time (budget spent, endpoint disabled, webhooks off); its endpoint's recovery may queue it again. */
  readonly gaveUp: number;
  /** Nothing to send: the webhook or endpoint is gone, or it was already delivered. */
  readonly skipped: number;
  /** Deliveries whose outcome could not be recorded; their lease lapses and a later run retries them. */
  readonly errors: number;
}

type Outcome = 'delivered' | 'retried' | 'gaveUp' | 'skipped';

/** `last_error` of a webhook refused because its site turned webhooks off: never queued again by a recovery. */
const SITE_WEBHOOKS_OFF = 'Webhooks are disabled for this site.';

/** Idempotency scope of the once-per-interval failure count of a paused endpoint. */
const PAUSED_FAILURE_SCOPE = 'webhook_paused_failure';

/** What a send needs, read in one transaction before the POST. */
interface Prepared {
  readonly site: SiteRecord;
  readonly endpoint: WebhookEndpointRecord;
  readonly webhook: WebhookRecord;
}

/**
 * Sets a new webhook's body, right after its insert in the same transaction: the body starts
 * `id=<id>`, so it can only be built once the row has its id. Fails loudly on an adapter that did
 * not store it (never a silent empty body).
 */
async function storeBody(tx: StorageTransaction, webhook: WebhookRecord, body: string): Promise<WebhookRecord> {
  const stored = await tx.webhooks.updateWebhook(webhook.siteId, webhook.id, { body });
  if (stored?.body !== body) {
    throw new BillingError('storage', 'The storage adapter did not store the webhook body set after its insert.', {
      data: { webhookId: webhook.id },
    });
  }
  return stored;
}

const KIND = 'webhook_delivery' as const;

/**
 * The due-work subject of a webhook's deliveries: the webhook id. Subject ids of different kinds
 * share one column, so code that cancels work always names the kinds it means.
 */
export function webhookDeliverySubject(webhookId: number): number {
  return webhookId;
}

/** The webhook id of a `webhook_delivery` row (see {@link webhookDeliverySubject}). */
function deliveredWebhookId(item: DueWorkRecord): number {
  return item.subjectId;
}

/** Runs `work` over `items` with at most `limit` in flight; every item is attempted, results in order. */
async function settleAll<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) {
      try {
        results[i] = { status: 'fulfilled', value: await work(items[i]!) };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

function positive(value: number | undefined, fallback: number, label: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw invalid(`${label}: must be a positive number.`);
  return value;
}

/**
 * Webhooks: endpoints per site, one webhook per subscribed endpoint for
 * every event (created in the transaction of the change that caused it, through the command
 * runner's `onEvents` hook, so a rolled-back change leaves none), and a delivery worker over due
 * work. Each webhook's body is built once, with its id, and sent byte for byte on every retry and
 * replay; the id never changes. Deliveries are `webhook_delivery` due-work rows claimed with a
 * lease, so any number of workers (engines on one database) never send one delivery at once, and
 * the POST happens outside any transaction.
 *
 * Outages (the service's retry rules, refined so that a receiver that was down gets everything once it is
 * back): each failed attempt counts against the endpoint while it is enabled, and past 25 the
 * endpoint is paused; webhooks for a paused endpoint are held and retried every 2 h (24 tries),
 * and while it is paused at most one failure counts per 2 h, so it is disabled (no more webhooks
 * generated) only after about two days of failed retries, never because many webhooks were queued
 * when it went down. On the endpoint's first success after failures (a delivery or a test
 * webhook) its recovery queues again, due now: every webhook of the endpoint that gave up in the
 * retry window before it (48 h by default; test webhooks and webhooks refused because the site had
 * webhooks off excepted), and every delivery still held for a later retry. Queued webhooks keep
 * their id and body and start a fresh retry cycle, as a replay does. A webhook is marked
 * successful on its first 200, so the receiver gets each id once (a duplicate is possible only
 * when a worker dies after the POST and before recording it, and then carries the same id).
 */
export class WebhookService {
  readonly #deps: CommandDeps;
  readonly #owner = `webhooks-${randomUUID()}`;
  readonly #allowLocal: boolean;
  readonly #compat: WebhookCompat;
  readonly #fetch: typeof fetch | undefined;
  readonly #resolve: WebhookResolver;
  readonly #timeoutMs: number;
  readonly #maxResponseBytes: number;
  readonly #batchSize: number;
  readonly #concurrency: number;
  readonly #policy: WebhookRetryPolicy;

  constructor(deps: CommandDeps, options: WebhookServiceOptions = {}) {
    this.#deps = deps;
    this.#allowLocal = options.allowLocalReceivers === true;
    this.#compat = options.compat === 'chargify' ? 'chargify' : 'spec';
    this.#fetch = options.fetch;
    this.#resolve = options.resolve ?? systemResolver;
    this.#timeoutMs = positive(options.timeoutMs, 15_000, 'Timeout');
    this.#maxResponseBytes = Math.floor(positive(options.maxResponseBytes, 4096, 'Max response bytes'));
    this.#batchSize = Math.floor(positive(options.batchSize, 50, 'Batch size'));
    this.#concurrency = Math.floor(positive(options.concurrency, 8, 'Concurrency'));
    this.#policy = {
      schedule: checkRetrySchedule(options.retrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS),
      health: checkEndpointHealth({ ...DEFAULT_ENDPOINT_HEALTH, ...options.endpointHealth }),
    };
  }

  /** How long a claim holds: every delivery of a batch may take the full timeout, with a wide margin. */
  get #leaseMs(): number {
    return Math.max(5 * 60_000, Math.ceil(this.#batchSize / this.#concurrency) * (this.#timeoutMs + 5_000) * 2);
  }

  #context(site: SiteRecord): WebhookPayloadContext {
    return {
      site: { id: site.id, subdomain: site.subdomain, currency: site.currency, timeZone: site.timeZone },
      compat: this.#compat,
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Fan-out: events to webhooks, inside the command's transaction.

  /**
   * The command runner's `onEvents` hook. For each event of a site with webhooks enabled, inserts
   * one webhook per endpoint that subscribed to the event's key and is not disabled, with its body
   * built now (the state at the event), and one `webhook_delivery` row due now, or after the paused
   * interval for a paused endpoint. Runs in the command's transaction, so the webhooks exist
   * exactly when the change commits. Sites without endpoints cost two reads per command.
   */
  async fanOut(
    tx: StorageTransaction,
    events: readonly BillingEvent[],
    now: Date,
    /** Completes an event's payload for its webhooks; called only for events some endpoint wants. */
    complete?: (tx: StorageTransaction, event: BillingEvent) => Promise<BillingEvent>,
  ): Promise<void> {
    const targets = new Map<number, { site: SiteRecord; endpoints: WebhookEndpointRecord[] } | null>();
    const loads = new SubjectLoader(tx);
    for (const event of events) {
      if (event.key === 'test') continue;
      let target = targets.get(event.siteId);
      if (target === undefined) {
        const site = await tx.sites.findById(event.siteId);
        target = site?.settings.webhooksEnabled ? { site, endpoints: await tx.webhooks.listEndpoints(site.id) } : null;
        targets.set(event.siteId, target);
      }
      if (target === null) continue;
      const endpoints = target.endpoints.filter((e) => e.status !== 'disabled' && e.events.includes(event.key));
      if (endpoints.length === 0) continue;
      const full = complete === undefined ? event : await complete(tx, event);
      const subjects = await loads.subjectsFor(target.site.id, full);
      const payload = buildWebhookPayload(full, subjects, this.#context(target.site));
      for (const endpoint of endpoints) {
        const inserted = await tx.webhooks.insertWebhook(
          newWebhook(target.site.id, endpoint.id, event.id, event.key, now),
        );
        await storeBody(tx, inserted, webhookBody(inserted.id, event.key, payload));
        const dueAt = endpoint.status === 'paused' ? new Date(now.getTime() + this.#policy.health.pausedRetryMs) : now;
        await tx.dueWork.schedule({
          siteId: target.site.id,
          kind: KIND,
          subjectId: webhookDeliverySubject(inserted.id),
          dueAt,
          uniqueKey: `webhook:${inserted.id}`,
          payload: { endpointId: endpoint.id },
        });
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Endpoints.

  /** The URL rules for this site. */
  #checkUrl(site: SiteRecord, url: unknown): string {
    return checkWebhookUrl(url, { mode: site.mode, allowLocalReceivers: this.#allowLocal });
  }

  /**
   * Adds an endpoint that receives the listed events. The URL must follow the endpoint rules (publicly
   * reachable, port 80 or 443, HTTPS on a live site) and be new to the site; every problem is
   * reported at once (`Url: ...`, `Webhook subscriptions: ...`).
   */
  createEndpoint(subdomain: string, input: WebhookEndpointInput): Promise<WebhookEndpointRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const errors = new ValidationCollector();
      const url = errors.capture(() => this.#checkUrl(site, input?.url));
      const events = errors.capture(() => checkWebhookSubscriptions(input?.webhookSubscriptions));
      errors.throwIfAny();
      const existing = await ctx.tx.webhooks.listEndpoints(site.id);
      if (existing.some((e) => e.url === url)) throw invalid('Url: has already been taken.', 'url');
      return ctx.tx.webhooks.insertEndpoint({
        siteId: site.id,
        url: url!,
        events: events!,
        status: 'enabled',
        failureCount: 0,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      });
    });
  }

  /**
   * Changes an endpoint's URL and/or events. A new URL is checked like a new endpoint's and resets
   * the failure count, re-enabling a paused or disabled endpoint.
   */
  updateEndpoint(subdomain: string, id: number, input: Partial<WebhookEndpointInput>): Promise<WebhookEndpointRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const endpoint = await loadEndpoint(ctx.tx, site.id, id);
      const errors = new ValidationCollector();
      const url = input?.url === undefined ? undefined : errors.capture(() => this.#checkUrl(site, input.url));
      const events =
        input?.webhookSubscriptions === undefined
          ? undefined
          : errors.capture(() => checkWebhookSubscriptions(input.webhookSubscriptions));
      errors.throwIfAny();
      const changedUrl = url !== undefined && url !== endpoint.url;
      if (changedUrl) {
        const existing = await ctx.tx.webhooks.listEndpoints(site.id);
        if (existing.some((e) => e.id !== id && e.url === url)) throw invalid('Url: has already been taken.', 'url');
      }
      const updated = await ctx.tx.webhooks.updateEndpoint(site.id, id, {
        ...(changedUrl ? { url, failureCount: 0, status: 'enabled' as const } : {}),
        ...(events === undefined ? {} : { events }),
        updatedAt: ctx.now,
      });
      if (updated === undefined) throw notFound('Endpoint', id);
      return updated;
    });
  }

  /** Deletes an endpoint and its webhooks; their queued deliveries find nothing to send and finish. */
  deleteEndpoint(subdomain: string, id: number): Promise<void> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      if (!(await ctx.tx.webhooks.deleteEndpoint(site.id, id))) throw notFound('Endpoint', id);
    });
  }

  /** The site's endpoints by id. */
  listEndpoints(subdomain: string): Promise<WebhookEndpointRecord[]> {
    return this.#deps.storage.transaction(async (tx) => tx.webhooks.listEndpoints((await loadSite(tx, subdomain)).id));
  }

  /** One endpoint; `not_found` when the site has no such endpoint. */
  getEndpoint(subdomain: string, id: number): Promise<WebhookEndpointRecord> {
    return this.#deps.storage.transaction(async (tx) => loadEndpoint(tx, (await loadSite(tx, subdomain)).id, id));
  }

  // ---------------------------------------------------------------------------------------------
  // Test, replay, list.

  /**
   * Sends the documented test webhook (`id=<id>&event=test&payload[chargify]=testing`) to one
   * endpoint now and returns it with the outcome. It is sent once, without retries; a success
   * resets the endpoint's failure count (re-enabling it, and queueing again what gave up during
   * its outage, as any first success after failures does), a failure is not counted against it.
   */
  async sendTest(subdomain: string, endpointId: number): Promise<WebhookView> {
    const prepared = await runCommand(this.#deps, async (ctx): Promise<Prepared> => {
      const site = await loadSite(ctx.tx, subdomain);
      const endpoint = await loadEndpoint(ctx.tx, site.id, endpointId);
      const inserted = await ctx.tx.webhooks.insertWebhook(newWebhook(site.id, endpoint.id, null, 'test', ctx.now));
      const webhook = await storeBody(ctx.tx, inserted, testWebhookBody(inserted.id));
      return { site, endpoint, webhook };
    });
    const { result, sentUrl } = await this.#send(prepared);
    const at = this.#deps.clock.now();
    return this.#deps.storage.transaction(async (tx) => {
      const { site, webhook } = prepared;
      const stored = await tx.webhooks.updateWebhook(site.id, webhook.id, {
        ...sentFields(webhook, at, sentUrl),
        ...(result.accepted
          ? { status: 'successful' as const, acceptedAt: at }
          : { status: 'failed' as const, lastError: deliveryErrorText(result.error, 1, 1), lastErrorAt: at }),
      });
      if (result.accepted && (await resetEndpoint(tx, site.id, webhook.endpointId, at))) {
        await this.#recover(tx, site.id, webhook.endpointId, at);
      }
      return view(stored ?? webhook, site);
    });
  }

  /**
   * Queues chosen webhooks to be sent again, unchanged: same id, same body. Each
   * starts a fresh retry cycle; one already queued or in flight is left as it is. `not_found` when
   * any id is not a webhook of the site (then nothing is queued).
   */
  replay(subdomain: string, ids: readonly number[]): Promise<WebhookView[]> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      if (!Array.isArray(ids) || ids.length === 0) throw invalid('Ids: cannot be blank.', 'ids');
      const out: WebhookView[] = [];
      for (const id of new Set(ids)) {
        const webhook = Number.isSafeInteger(id) ? await ctx.tx.webhooks.findWebhook(site.id, id) : undefined;
        if (webhook === undefined) throw notFound('Webhook', id);
        const queued = await ctx.tx.dueWork.pendingFor(site.id, webhookDeliverySubject(id), [KIND]);
        if (queued.length > 0) {
          out.push(view(webhook, site));
          continue;
        }
        const pending = await ctx.tx.webhooks.updateWebhook(site.id, id, { status: 'pending', updatedAt: ctx.now });
        await ctx.tx.dueWork.schedule({
          siteId: site.id,
          kind: KIND,
          subjectId: webhookDeliverySubject(id),
          dueAt: ctx.now,
          // Replays are never deduplicated by key: the open-delivery check above already keeps one at a time.
          uniqueKey: `webhook:${id}:replay:${randomUUID()}`,
          payload: { endpointId: webhook.endpointId, replay: true },
        });
        out.push(view(pending ?? webhook, site));
      }
      return out;
    });
  }

  /** One page of the site's webhooks, newest first, filtered by status and local creation dates. */
  list(subdomain: string, query: WebhookListQuery = {}): Promise<WebhookView[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const errors = new ValidationCollector();
      if (query.status !== undefined && !['pending', 'successful', 'failed'].includes(query.status)) {
        errors.add('Status: must be successful, failed or pending.', 'status');
      }
      const since =
        query.sinceDate === undefined
          ? undefined
          : errors.capture(() => parseLocalDate(query.sinceDate, site.timeZone, 'Since date'));
      const untilStart =
        query.untilDate === undefined
          ? undefined
          : errors.capture(() => parseLocalDate(query.untilDate, site.timeZone, 'Until date'));
      errors.throwIfAny();
      const filter: WebhookFilter = {
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(since === undefined ? {} : { since }),
        ...(untilStart === undefined ? {} : { until: endOfLocalDay(untilStart, site.timeZone) }),
        ...(query.endpointId === undefined ? {} : { endpointId: query.endpointId }),
      };
      const rows = await tx.webhooks.listWebhooks(site.id, filter, clampPage(query.page, query.perPage));
      return rows.map((row) => view(row, site));
    });
  }

  /** One webhook; `not_found` when the site has no such webhook. */
  get(subdomain: string, id: number): Promise<WebhookView> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const webhook = await tx.webhooks.findWebhook(site.id, id);
      if (webhook === undefined) throw notFound('Webhook', id);
      return view(webhook, site);
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Delivery worker.

  /**
   * Delivers every webhook due up to `until`, oldest first: claims `webhook_delivery` rows in
   * batches under this worker's lease, POSTs each outside any transaction (a few at once), then
   * records the outcome in its own transaction: accepted (and, on the endpoint's first success
   * after failures, its recovery: see the class comment); or failed, counted against the endpoint
   * (pausing or disabling it past its thresholds) and scheduled again or given up. Retries and
   * webhooks queued again by a recovery that fall due before `until` are sent in the same call,
   * each at its own due instant.
   */
  async deliverDue(options: DeliverDueOptions = {}): Promise<DeliverySummary> {
    const until = options.until ?? this.#deps.clock.now();
    const summary = { processed: 0, delivered: 0, retried: 0, gaveUp: 0, skipped: 0, errors: 0 };
    let failure: unknown;
    for (;;) {
      const left =
        options.limit === undefined ? this.#batchSize : Math.min(this.#batchSize, options.limit - summary.processed);
      if (left <= 0) break;
      const now = this.#deps.clock.now();
      const batch = await this.#deps.storage.transaction((tx) =>
        tx.dueWork.claim({
          until,
          limit: left,
          owner: this.#owner,
          leaseUntil: new Date(now.getTime() + this.#leaseMs),
          now,
          kinds: [KIND],
          ...(options.siteId === undefined ? {} : { siteId: options.siteId }),
        }),
      );
      if (batch.length === 0) break;
      const results = await settleAll(batch, this.#concurrency, (item) => this.#deliver(item));
      for (const result of results) {
        summary.processed += 1;
        if (result.status === 'fulfilled') summary[result.value] += 1;
        else {
          // The row stays claimed; its lease lapses and a later run retries it.
          summary.errors += 1;
          if (!(result.reason instanceof BillingError)) failure ??= result.reason;
        }
      }
      if (failure !== undefined) throw failure;
    }
    return summary;
  }

  /** One delivery: read what to send, POST it, record the outcome. */
  async #deliver(item: DueWorkRecord): Promise<Outcome> {
    const prepared = await this.#deps.storage.transaction(async (tx): Promise<Prepared | Outcome> => {
      const site = await tx.sites.findById(item.siteId);
      const webhook = await tx.webhooks.findWebhook(item.siteId, deliveredWebhookId(item));
      const endpoint = webhook && (await tx.webhooks.findEndpoint(item.siteId, webhook.endpointId));
      if (!site || !webhook || !endpoint || webhook.status === 'successful') {
        await tx.dueWork.complete(item.siteId, item.id, this.#owner, this.#at(item));
        return 'skipped';
      }
      const refusal = !site.settings.webhooksEnabled
        ? SITE_WEBHOOKS_OFF
        : endpoint.status === 'disabled'
          ? `Endpoint disabled after ${endpoint.failureCount} consecutive failures.`
          : undefined;
      if (refusal !== undefined) {
        const at = this.#at(item);
        await tx.webhooks.updateWebhook(site.id, webhook.id, {
          status: 'failed',
          lastError: refusal,
          lastErrorAt: at,
          updatedAt: at,
        });
        await tx.dueWork.complete(item.siteId, item.id, this.#owner, at);
        return 'gaveUp';
      }
      return { site, endpoint, webhook };
    });
    if (typeof prepared === 'string') return prepared;
    const { result, sentUrl } = await this.#send(prepared);
    const at = this.#at(item);
    return this.#deps.storage.transaction(async (tx): Promise<Outcome> => {
      const { site, webhook } = prepared;
      if (result.accepted) {
        await tx.webhooks.updateWebhook(site.id, webhook.id, {
          ...sentFields(webhook, at, sentUrl),
          status: 'successful',
          acceptedAt: at,
        });
        await tx.dueWork.complete(site.id, item.id, this.#owner, at);
        if (await resetEndpoint(tx, site.id, webhook.endpointId, at)) {
          await this.#recover(tx, site.id, webhook.endpointId, at);
        }
        return 'delivered';
      }
      const attempt = item.attempts + 1;
      const counted = await this.#countFailure(tx, site.id, webhook.endpointId, at);
      const status = counted === undefined ? 'disabled' : endpointStatusFor(counted.failureCount, this.#policy.health);
      if (counted !== undefined && counted.status !== status) {
        await tx.webhooks.updateEndpoint(site.id, counted.id, { status, updatedAt: at });
      }
      const decision = retryDecision(attempt, status, this.#policy);
      await tx.webhooks.updateWebhook(site.id, webhook.id, {
        ...sentFields(webhook, at, sentUrl),
        status: decision.action === 'retry' ? 'pending' : 'failed',
        lastError: deliveryErrorText(result.error, attempt, decision.of),
        lastErrorAt: at,
      });
      if (decision.action === 'retry') {
        await tx.dueWork.release(site.id, item.id, this.#owner, new Date(at.getTime() + decision.delayMs), at);
        return 'retried';
      }
      await tx.dueWork.complete(site.id, item.id, this.#owner, at);
      return 'gaveUp';
    });
  }

  /**
   * Counts a failed delivery against its endpoint and returns the endpoint after it (undefined
   * when it is gone). An enabled endpoint counts every failure; a paused one at most one per
   * paused interval (`countsAgainstPaused`) from its `updatedAt` (set when it was paused, at each
   * counted failure, and by an endpoint update, which only delays the next count), claimed through
   * an idempotency key named after that instant, so concurrent workers failing at once count once.
   */
  async #countFailure(
    tx: StorageTransaction,
    siteId: number,
    endpointId: number,
    at: Date,
  ): Promise<WebhookEndpointRecord | undefined> {
    const endpoint = await tx.webhooks.findEndpoint(siteId, endpointId);
    if (endpoint === undefined) return undefined;
    if (endpoint.status !== 'paused') return tx.webhooks.countFailure(siteId, endpointId, at);
    const health = this.#policy.health;
    if (!countsAgainstPaused(endpoint.updatedAt, at, health)) return endpoint;
    const first = await tx.idempotency.claim(
      siteId,
      PAUSED_FAILURE_SCOPE,
      `${endpointId}:${endpoint.updatedAt.toISOString()}`,
      at,
      new Date(at.getTime() + health.pausedRetryMs),
    );
    return first ? tx.webhooks.countFailure(siteId, endpointId, at) : endpoint;
  }

  /**
   * An endpoint's recovery, in the transaction of its first success after failures: queues again,
   * due now, the webhooks that gave up during the outage (failed, created within the retry window,
   * except test webhooks and those refused because the site had webhooks off) and the deliveries
   * still held for a later retry. Ids and bodies stay; each starts a fresh retry cycle. Unique keys
   * named after the webhook's attempts (or the held row) make a second, concurrent recovery queue
   * nothing more.
   */
  async #recover(tx: StorageTransaction, siteId: number, endpointId: number, at: Date): Promise<void> {
    const since = new Date(at.getTime() - requeueWindowMs(this.#policy));
    const failed = await allWebhooks(tx, siteId, { status: 'failed', endpointId, since });
    const held = await allWebhooks(tx, siteId, { status: 'pending', endpointId });
    for (const webhook of failed) {
      if (webhook.eventId === null || webhook.lastError === SITE_WEBHOOKS_OFF) continue;
      if ((await tx.dueWork.pendingFor(siteId, webhookDeliverySubject(webhook.id), [KIND])).length > 0) continue;
      const queued = await tx.dueWork.schedule({
        siteId,
        kind: KIND,
        subjectId: webhookDeliverySubject(webhook.id),
        dueAt: at,
        uniqueKey: `webhook:${webhook.id}:requeue:${webhook.attempts}`,
        payload: { endpointId, requeued: true },
      });
      if (queued !== undefined)
        await tx.webhooks.updateWebhook(siteId, webhook.id, { status: 'pending', updatedAt: at });
    }
    for (const webhook of held) {
      const open = await tx.dueWork.pendingFor(siteId, webhookDeliverySubject(webhook.id), [KIND]);
      const waiting = open.length === 1 ? open[0]! : undefined;
      // Only a row nobody holds and that waits for a later retry; a claimed one is in flight.
      if (waiting?.status !== 'pending' || waiting.dueAt.getTime() <= at.getTime()) continue;
      await tx.dueWork.cancelFor(siteId, webhookDeliverySubject(webhook.id), [KIND], at);
      await tx.dueWork.schedule({
        siteId,
        kind: KIND,
        subjectId: webhookDeliverySubject(webhook.id),
        dueAt: at,
        uniqueKey: `webhook:${webhook.id}:resume:${waiting.id}`,
        payload: { endpointId, resumed: true },
      });
    }
  }

  /**
   * The instant a delivery happens at: now, or its due instant when the worker runs ahead of the
   * clock (`until` in the future), so a simulated run gives the same timeline as a real one.
   */
  #at(item: DueWorkRecord): Date {
    return new Date(Math.max(this.#deps.clock.now().getTime(), item.dueAt.getTime()));
  }

  /**
   * Signs and POSTs a webhook's stored body. The URL is checked again first, because the site may
   * have gone live (HTTPS only) or the engine lost its local-receiver option since it was added.
   * Then the sender resolves the hostname and judges every address (loopback only with the
   * local-receiver option on a test-mode site); a refused destination is a failed attempt whose
   * `last_error` says why, like any other failure.
   */
  async #send({ site, endpoint, webhook }: Prepared): Promise<{ result: WebhookSendResult; sentUrl: string | null }> {
    try {
      this.#checkUrl(site, endpoint.url);
    } catch (error) {
      const message = error instanceof BillingError ? error.message : String(error);
      return { result: { accepted: false, status: null, error: `Endpoint URL rejected: ${message}` }, sentUrl: null };
    }
    const hmac = webhookSignatureHmacSha256(webhook.body, site.sharedKey);
    const chargify = this.#compat === 'chargify';
    const md5 = chargify ? webhookSignatureMd5(webhook.body, site.sharedKey) : undefined;
    let target: URL;
    try {
      target = new URL(fillSignatureTemplate(endpoint.url, hmac, md5));
    } catch {
      // Checked above, so only a URL stored by other means gets here; fail the attempt, not the worker.
      return {
        result: { accepted: false, status: null, error: 'Endpoint URL rejected: Url: is not a valid URL.' },
        sentUrl: null,
      };
    }
    const headers: Record<string, string> = {
      'Content-Type': 'application/x-www-form-urlencoded',
      'User-Agent': 'billing-engine-webhooks',
      'X-Service-Webhook-Signature-Hmac-Sha-256': hmac,
    };
    if (chargify) {
      headers['X-Chargify-Webhook-Signature-Hmac-Sha-256'] = hmac;
      headers['X-Chargify-Webhook-Signature'] = md5!;
      headers['X-Chargify-Webhook-Id'] = String(webhook.id);
    }
    if (target.username !== '' || target.password !== '') {
      // Credentials go as Basic auth (fetch refuses them in URLs) and stay out of last_sent_url.
      const user = decodeURIComponent(target.username);
      const password = decodeURIComponent(target.password);
      headers.Authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      target.username = '';
      target.password = '';
    }
    const url = target.toString();
    const result = await sendWebhook(
      { url, body: webhook.body, headers },
      {
        ...(this.#fetch === undefined ? {} : { fetch: this.#fetch }),
        resolve: this.#resolve,
        allowLoopback: this.#allowLocal && site.mode !== 'live',
        timeoutMs: this.#timeoutMs,
        maxResponseBytes: this.#maxResponseBytes,
      },
    );
    return { result, sentUrl: url };
  }
}

/** A new webhook row, before its body (set right after, once the id is known). */
function newWebhook(
  siteId: number,
  endpointId: number,
  eventId: number | null,
  eventKey: string,
  now: Date,
): Omit<WebhookRecord, 'id'> {
  return {
    siteId,
    endpointId,
    eventId,
    eventKey,
    body: '',
    status: 'pending',
    attempts: 0,
    lastSentAt: null,
    lastSentUrl: null,
    lastError: null,
    lastErrorAt: null,
    acceptedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** The fields every send updates. */
function sentFields(webhook: WebhookRecord, at: Date, sentUrl: string | null) {
  return {
    attempts: webhook.attempts + 1,
    lastSentAt: at,
    ...(sentUrl === null ? {} : { lastSentUrl: sentUrl }),
    updatedAt: at,
  };
}

/**
 * A success: the endpoint's failure count goes back to 0 and it is enabled again.
 * Returns true when this ended an outage (the endpoint had failures or was not enabled).
 */
async function resetEndpoint(tx: StorageTransaction, siteId: number, endpointId: number, at: Date): Promise<boolean> {
  const endpoint = await tx.webhooks.findEndpoint(siteId, endpointId);
  if (endpoint === undefined || (endpoint.failureCount === 0 && endpoint.status === 'enabled')) return false;
  await tx.webhooks.updateEndpoint(siteId, endpointId, { failureCount: 0, status: 'enabled', updatedAt: at });
  return true;
}

/** Every webhook of the site matching the filter, read page by page before any of them changes. */
async function allWebhooks(tx: StorageTransaction, siteId: number, filter: WebhookFilter): Promise<WebhookRecord[]> {
  const out: WebhookRecord[] = [];
  for (let page = 1; ; page++) {
    const rows = await tx.webhooks.listWebhooks(siteId, filter, { page, perPage: 200 });
    out.push(...rows);
    if (rows.length < 200) return out;
  }
}

async function loadEndpoint(tx: StorageTransaction, siteId: number, id: number): Promise<WebhookEndpointRecord> {
  const endpoint = Number.isSafeInteger(id) ? await tx.webhooks.findEndpoint(siteId, id) : undefined;
  if (endpoint === undefined) throw notFound('Endpoint', id);
  return endpoint;
}

function view(webhook: WebhookRecord, site: SiteRecord): WebhookView {
  return {
    id: webhook.id,
    endpointId: webhook.endpointId,
    event: webhook.eventKey,
    eventId: webhook.eventId,
    body: webhook.body,
    signature: webhookSignatureMd5(webhook.body, site.sharedKey),
    signatureHmacSha256: webhookSignatureHmacSha256(webhook.body, site.sharedKey),
    status: webhook.status,
    successful: webhook.status === 'successful',
    attempts: webhook.attempts,
    createdAt: webhook.createdAt,
    acceptedAt: webhook.acceptedAt,
    lastSentAt: webhook.lastSentAt,
    lastSentUrl: webhook.lastSentUrl,
    lastErrorAt: webhook.lastErrorAt,
    lastError: webhook.lastError,
  };
}

/**
 * Loads the records payloads nest, once per fan-out: the events of one command share one
 * transaction and one final state, so a subscription touched by three events is read once.
 */
class SubjectLoader {
  readonly #tx: StorageTransaction;
  readonly #subscriptions = new Map<string, Promise<SubscriptionSnapshot | undefined>>();
  readonly #products = new Map<string, Promise<ProductSnapshot | undefined>>();

  constructor(tx: StorageTransaction) {
    this.#tx = tx;
  }

  async subjectsFor(siteId: number, event: BillingEvent): Promise<WebhookSubjects> {
    const needs = webhookPayloadNeeds(event);
    const subscription =
      needs.subscriptionId === undefined ? undefined : await this.#subscription(siteId, needs.subscriptionId);
    const customer: CustomerRecord | undefined =
      needs.customerId === undefined ? undefined : await this.#tx.customers.findById(siteId, needs.customerId);
    const transaction: TransactionRecord | undefined =
      needs.transactionId === undefined ? undefined : await this.#tx.ledger.findById(siteId, needs.transactionId);
    const products = new Map<number, ProductSnapshot>();
    for (const id of needs.productIds) {
      const product = await this.#product(siteId, id);
      if (product) products.set(id, product);
    }
    return { subscription, customer, transaction, products };
  }

  #subscription(siteId: number, id: number): Promise<SubscriptionSnapshot | undefined> {
    let loaded = this.#subscriptions.get(`${siteId}:${id}`);
    if (loaded === undefined) {
      loaded = this.#loadSubscription(siteId, id);
      this.#subscriptions.set(`${siteId}:${id}`, loaded);
    }
    return loaded;
  }

  async #loadSubscription(siteId: number, id: number): Promise<SubscriptionSnapshot | undefined> {
    const tx = this.#tx;
    const subscription = await tx.subscriptions.findById(siteId, id);
    if (subscription === undefined) return undefined;
    const [product, version, customer] = [
      await tx.catalog.findProduct(siteId, subscription.productId),
      await tx.catalog.findProductVersion(siteId, subscription.productId, subscription.productVersion),
      await tx.customers.findById(siteId, subscription.customerId),
    ];
    if (!product || !version || !customer) return undefined;
    const family = await tx.catalog.findFamily(siteId, product.familyId);
    const paymentProfile =
      subscription.paymentProfileId === null
        ? null
        : ((await tx.customers.findPaymentProfile(siteId, subscription.paymentProfileId)) ?? null);
    return {
      subscription,
      balanceInCents: await tx.ledger.balance(siteId, id),
      customer,
      product: { product, version, family },
      paymentProfile,
    };
  }

  #product(siteId: number, id: number): Promise<ProductSnapshot | undefined> {
    let loaded = this.#products.get(`${siteId}:${id}`);
    if (loaded === undefined) {
      loaded = (async () => {
        const product = await this.#tx.catalog.findProduct(siteId, id);
        const version = product && (await this.#tx.catalog.findProductVersion(siteId, id, product.currentVersion));
        if (!product || !version) return undefined;
        return { product, version, family: await this.#tx.catalog.findFamily(siteId, product.familyId) };
      })();
      this.#products.set(`${siteId}:${id}`, loaded);
    }
    return loaded;
  }
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const WEBHOOK_METHODS = [
  'createEndpoint',
  'updateEndpoint',
  'deleteEndpoint',
  'listEndpoints',
  'getEndpoint',
  'sendTest',
  'replay',
  'list',
  'get',
] as const;
