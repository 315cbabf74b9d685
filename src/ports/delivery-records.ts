/**
 * Records and repositories for webhooks and direct-post calls. Same conventions as `storage.ts`.
 */
import type { PageRequest } from './page-request.js';

/** Whether an endpoint gets webhooks (paused after 25 failures, disabled after 50). */
export type WebhookEndpointStatus = 'enabled' | 'paused' | 'disabled';

/** A merchant URL that receives webhooks for the events it subscribed to. */
export interface WebhookEndpointRecord {
  readonly id: number;
  readonly siteId: number;
  readonly url: string;
  /** Event keys this endpoint receives. */
  readonly events: readonly string[];
  readonly status: WebhookEndpointStatus;
  /** Consecutive failed deliveries; reset by any success, a successful test, or a URL change. */
  readonly failureCount: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Delivery state of one webhook. */
export type WebhookStatus = 'pending' | 'successful' | 'failed';

/** One webhook: an event's signed form body for one endpoint. Its id is stable across retries and replays. */
export interface WebhookRecord {
  readonly id: number;
  readonly siteId: number;
  readonly endpointId: number;
  /** The outbox event it carries; null for a test webhook. */
  readonly eventId: number | null;
  readonly eventKey: string;
  /** The exact form-encoded body that is signed and sent. */
  readonly body: string;
  readonly status: WebhookStatus;
  readonly attempts: number;
  readonly lastSentAt: Date | null;
  readonly lastSentUrl: string | null;
  readonly lastError: string | null;
  readonly lastErrorAt: Date | null;
  readonly acceptedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Filter of a webhook list. Bounds are inclusive. */
export interface WebhookFilter {
  readonly status?: WebhookStatus;
  readonly since?: Date;
  readonly until?: Date;
  readonly endpointId?: number;
}

/** Webhook endpoints and deliveries. */
export interface WebhooksRepository {
  insertEndpoint(endpoint: Omit<WebhookEndpointRecord, 'id'>): Promise<WebhookEndpointRecord>;
  findEndpoint(siteId: number, id: number): Promise<WebhookEndpointRecord | undefined>;
  /** The site's endpoints by id. */
  listEndpoints(siteId: number): Promise<WebhookEndpointRecord[]>;
  updateEndpoint(
    siteId: number,
    id: number,
    patch: Partial<Pick<WebhookEndpointRecord, 'url' | 'events' | 'status' | 'failureCount' | 'updatedAt'>>,
  ): Promise<WebhookEndpointRecord | undefined>;
  /** Deletes an endpoint and its webhooks; false when missing. */
  deleteEndpoint(siteId: number, id: number): Promise<boolean>;
  /**
   * Adds one to an endpoint's failure count atomically (concurrent deliveries never lose a
   * failure) and returns the endpoint after it, or undefined when missing.
   */
  countFailure(siteId: number, id: number, now: Date): Promise<WebhookEndpointRecord | undefined>;
  insertWebhook(webhook: Omit<WebhookRecord, 'id'>): Promise<WebhookRecord>;
  findWebhook(siteId: number, id: number): Promise<WebhookRecord | undefined>;
  /** Changes a webhook (its body is set right after insert: the body carries the webhook's own id). */
  updateWebhook(
    siteId: number,
    id: number,
    patch: Partial<Omit<WebhookRecord, 'id' | 'siteId' | 'endpointId' | 'eventId' | 'eventKey' | 'createdAt'>>,
  ): Promise<WebhookRecord | undefined>;
  /** One page of the site's webhooks matching the filter, newest first (id descending). */
  listWebhooks(siteId: number, filter: WebhookFilter, page: PageRequest): Promise<WebhookRecord[]>;
}

/** A stored direct-post call: what was posted (without card data) and what was answered. */
export interface DirectCallRecord {
  /** 40 lowercase hex characters. */
  readonly id: string;
  readonly siteId: number;
  readonly apiId: string;
  readonly nonce: string | null;
  readonly timestamp: string | null;
  readonly success: boolean;
  /** The request parameters with sensitive card fields blanked. */
  readonly request: Readonly<Record<string, unknown>>;
  /** `{ result, meta, signup? }` as the service's call record shows. */
  readonly response: Readonly<Record<string, unknown>>;
  readonly createdAt: Date;
}

/**
 * A signed direct post's claim against replay. The request signature covers the plain
 * concatenation `api_id + timestamp + nonce + data`, so moving characters between the parts (a
 * timestamp `T7` with the nonce less its leading `7`, or the timestamp moved into an empty nonce)
 * gives another `(timestamp, nonce)` with the same valid signature. The claim therefore holds the
 * signed input itself, hashed, beside the `(api_id, timestamp, nonce)` key on which a repeat is refused.
 */
export interface DirectPostClaim {
  readonly siteId: number;
  /** Lowercase hex SHA-256 of the signed input `api_id + timestamp + nonce + data`, exactly as verified. */
  readonly inputHash: string;
  /**
   * `api_id|seconds|nonce` when the post sent both a timestamp and a nonce (it is protected
   * against replay); null when it did not (without a nonce no duplicate rejection is done).
   */
  readonly nonceKey: string | null;
  readonly at: Date;
}

/** Direct-post call records, and the replay claims of signed posts. */
export interface DirectCallsRepository {
  insert(call: DirectCallRecord): Promise<DirectCallRecord>;
  /** A call of this site, or undefined (another site's call is not found). */
  findById(siteId: number, id: string): Promise<DirectCallRecord | undefined>;
  /**
   * Claims a signed post against replay, as one atomic step (one statement on SQL), and returns
   * whether the post may go on. A protected claim (`nonceKey` given) succeeds only when the site
   * has no claim with the same `inputHash` (of any kind) and none with the same `nonceKey`; it
   * then records both, for good. An unprotected claim (`nonceKey` null) fails only when a
   * protected claim holds the same `inputHash`; it records the hash as unprotected, so a later
   * protected claim of it fails, and it succeeds any number of times for the same hash (posts
   * without a nonce may repeat). Race-safe: of concurrent claims that exclude each other, exactly
   * one succeeds. Claims are kept when the site's data is cleared; they go with the site.
   */
  claimPost(claim: DirectPostClaim): Promise<boolean>;
}
