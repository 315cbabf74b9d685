/**
 * Webhook rules as pure functions: endpoint URL rules, the addresses a webhook may be
 * sent to, event subscriptions, the retry schedule and endpoint health, and the
 * payload and body of each event's webhook in the service's form shape. No
 * clock, no I/O: the webhook service loads records, resolves and sends; these decide what is sent,
 * when, and where.
 */

export {
  checkDestination,
  type DestinationDecision,
  type DestinationRules,
  type ResolvedAddress,
} from './destination.js';
export {
  checkWebhookUrl,
  isLoopbackHost,
  isPublicHost,
  WEBHOOK_PORTS,
  WEBHOOK_URL_MAX_LENGTH,
  type WebhookUrlRules,
} from './endpoint-url.js';
export { checkWebhookSubscriptions, SUBSCRIBABLE_EVENT_KEYS } from './event-subscriptions.js';
export {
  type AddressScope,
  type AddressVerdict,
  classifyAddress,
  describeVerdict,
  literalAddressScope,
} from './ip-address.js';
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
