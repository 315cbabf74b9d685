/**
 * Webhook rules as pure functions: endpoint URL rules (spec §6), event subscriptions, the retry
 * schedule and endpoint health (reference §3.3), and the payload and body of each event's webhook
 * in the service's form shape (reference §3.1, §3.4). No clock, no I/O: the webhook service loads
 * records and sends; these decide what is sent and when.
 */
export {
  checkWebhookUrl,
  isLoopbackHost,
  isPublicHost,
  WEBHOOK_PORTS,
  WEBHOOK_URL_MAX_LENGTH,
  type WebhookUrlRules,
} from './endpoint-url.js';
export { checkWebhookSubscriptions, SUBSCRIBABLE_EVENT_KEYS } from './event-subscriptions.js';
export { type AddressScope, literalAddressScope } from './ip-address.js';
export {
  CHARGIFY_WEBHOOK_TIME_ZONE,
  type ProductSnapshot,
  type SubscriptionSnapshot,
  type WebhookCompat,
  type WebhookPayloadContext,
  webhookTimeZone,
} from './payload-shapes.js';
export {
  checkEndpointHealth,
  checkRetrySchedule,
  countsAgainstPaused,
  DEFAULT_ENDPOINT_HEALTH,
  DEFAULT_RETRY_SCHEDULE_MS,
  deliveryErrorText,
  type EndpointHealthPolicy,
  endpointStatusFor,
  type RetryDecision,
  requeueWindowMs,
  retryDecision,
  type WebhookRetryPolicy,
} from './retry-policy.js';
export {
  buildWebhookPayload,
  testWebhookBody,
  type WebhookEventInput,
  type WebhookPayloadNeeds,
  type WebhookSubjects,
  webhookBody,
  webhookPayloadNeeds,
} from './webhook-payload.js';
