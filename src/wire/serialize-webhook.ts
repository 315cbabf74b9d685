import { formatInstant } from '../domain/time/index.js';
import type { WebhookEndpointRecord, WebhookEndpointStatus, WebhookStatus } from '../ports/storage.js';
import type { WebhookView } from '../services/webhook-service.js';
import type { WireContext } from './wire-context.js';

/** A webhook endpoint as the service writes it: the URL, the event keys and its health. */
export interface EndpointJson {
  readonly id: number;
  readonly url: string;
  readonly webhook_subscriptions: readonly string[];
  /** `enabled`, `paused` or `disabled` (the endpoint's health). */
  readonly status: WebhookEndpointStatus;
  readonly site_id: number;
}

/**
 * The fields of an endpoint, unwrapped. `GET /endpoints.json` lists them bare, `[{id, url, ...}]`:
 * the official SDK (`WebhooksController.listEndpoints`, `array(endpointSchema)`) reads the items
 * unwrapped and would see no id or URL in `{"endpoint":{...}}` items.
 */
export function endpointJson(endpoint: WebhookEndpointRecord): EndpointJson {
  return {
    id: endpoint.id,
    url: endpoint.url,
    webhook_subscriptions: [...endpoint.events],
    status: endpoint.status,
    site_id: endpoint.siteId,
  };
}

/** `{"endpoint":{...}}`: the body of an endpoint create, read, update or delete. */
export function serializeEndpoint(endpoint: WebhookEndpointRecord): { endpoint: EndpointJson } {
  return { endpoint: endpointJson(endpoint) };
}

/**
 * A webhook as the service lists it: the exact form body that is sent, both of
 * its signatures, and its delivery record, whose times and error are null until there is one.
 */
export interface WebhookJson {
  readonly id: number;
  readonly event: string;
  readonly body: string;
  /** Legacy MD5 of the shared key and body. */
  readonly signature: string;
  readonly signature_hmac_sha_256: string;
  readonly successful: boolean;
  /** `pending`, `successful` or `failed`. */
  readonly status: WebhookStatus;
  readonly endpoint_id: number;
  readonly created_at: string;
  readonly accepted_at: string | null;
  readonly last_sent_at: string | null;
  readonly last_sent_url: string | null;
  readonly last_error_at: string | null;
  /** `404 Resource Not Found (retry 5 of 5)` style. */
  readonly last_error: string | null;
}

/** The fields of a webhook, unwrapped. */
export function webhookJson(webhook: WebhookView, context: WireContext): WebhookJson {
  const at = (instant: Date) => formatInstant(instant, context.timeZone);
  return {
    id: webhook.id,
    event: webhook.event,
    body: webhook.body,
    signature: webhook.signature,
    signature_hmac_sha_256: webhook.signatureHmacSha256,
    successful: webhook.successful,
    status: webhook.status,
    endpoint_id: webhook.endpointId,
    created_at: at(webhook.createdAt),
    accepted_at: webhook.acceptedAt === null ? null : at(webhook.acceptedAt),
    last_sent_at: webhook.lastSentAt === null ? null : at(webhook.lastSentAt),
    last_sent_url: webhook.lastSentUrl,
    last_error_at: webhook.lastErrorAt === null ? null : at(webhook.lastErrorAt),
    last_error: webhook.lastError,
  };
}

/** `{"webhook":{...}}`: the item of `GET /webhooks.json` and the body of a test message's answer. */
export function serializeWebhook(webhook: WebhookView, context: WireContext): { webhook: WebhookJson } {
  return { webhook: webhookJson(webhook, context) };
}
