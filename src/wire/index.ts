/**
 * The wire layer: zod schemas that read the service's JSON request bodies and query strings into
 * the engine's inputs, and serializers that write the engine's records as the service's JSON.
 * It knows nothing of HTTP; bindings (see `examples/http`) route requests through it.
 */

// Later features keep their wire format in their own files.
export * from './account-wire.js';
export {
  type AllocationListOptions,
  allocationFields,
  allocationListQuery,
  allocationRequest,
  asAllocationError,
  parseAllocationList,
  parseAllocationRequest,
  type UsageListQuery,
  usageFields,
  usageListQuery,
  usageRequest,
  type WireAllocation,
} from './allocation-request.js';
export { customerListInput, listPaging, queryText } from './api-list-queries.js';
export {
  COMPONENT_KIND_PATHS,
  componentCreateRequest,
  componentFields,
  componentUpdateRequest,
} from './component-request.js';
export { type CouponCodeQuery, couponCodeQuery, couponFields, couponRequest } from './coupon-request.js';
export {
  creditCardAttributesFields,
  paymentProfileFields,
  paymentProfileRequest,
  type WireCardInput,
  type WirePaymentProfileInput,
} from './credit-card-request.js';
export { customerFields, customerRequest } from './customer-request.js';
export {
  ACCESS_DENIED_TEXT,
  type ErrorJson,
  errorListBody,
  INTERNAL_ERROR_MESSAGE,
  serializeError,
  type WireErrorBody,
} from './error-body.js';
export {
  adjustmentFields,
  adjustmentRequest,
  asPaymentErrorMap,
  chargeFields,
  chargeRequest,
  creditFields,
  creditRequest,
  paymentRequest,
  readRefundRequest,
  refundFields,
  refundRequest,
} from './ledger-requests.js';
export {
  couponListQuery,
  DEFAULT_PER_PAGE,
  type ListPage,
  MAX_PER_PAGE,
  pageOf,
  pageQuery,
  pageQueryWithDefault,
  parseQueryString,
  type TransactionListQuery,
  transactionListParams,
  transactionListQuery,
} from './list-query.js';
export {
  type MetafieldUpdate,
  metadataFields,
  metadataNamesQuery,
  metadataRequest,
  metafieldFields,
  metafieldsRequest,
  metafieldUpdateFields,
  metafieldUpdateRequest,
} from './metafield-request.js';
export {
  type MigrationPreviewJson,
  migrationFields,
  migrationRequest,
  serializeMigrationPreview,
} from './migration-request.js';
export { noteFields, noteRequest } from './note-request.js';
export * from './price-point-wire.js';
export {
  productFamilyFields,
  productFamilyRequest,
  productFamilyUpdateFields,
  productFamilyUpdateRequest,
} from './product-family-request.js';
export { productFields, productRequest } from './product-request.js';
export * from './report-wire.js';
export {
  containsUnstorableText,
  decodeUtf8,
  INVALID_TEXT_MESSAGE,
  isStorablePercentEncoded,
  isStorableText,
  type JsonRequestBody,
  type JsonRequestBodyOptions,
  type JsonRequestRefusal,
  jsonNestedDeeperThan,
  jsonTooDeepMessage,
  MAX_JSON_DEPTH,
  readJsonRequestBody,
} from './request-text.js';
export {
  type AllocationJson,
  type AllocationPaymentJson,
  type AllocationPreviewEntry,
  type AllocationPreviewItemJson,
  type AllocationPreviewJson,
  type AllocationPreviewLineJson,
  allocationJson,
  allocationPaymentJson,
  type SubscriptionComponentJson,
  type SubscriptionComponentPriceJson,
  serializeAllocation,
  serializeAllocationPreview,
  serializeSubscriptionComponent,
  serializeUsage,
  type UsageBalances,
  type UsageJson,
} from './serialize-allocation.js';
export {
  type ComponentJson,
  type ComponentPriceJson,
  componentJson,
  serializeComponent,
  wirePrice,
} from './serialize-component.js';
export { type CouponJson, couponJson, serializeCoupon } from './serialize-coupon.js';
export { type CreditCardJson, creditCardJson } from './serialize-credit-card.js';
export { type CustomerJson, customerJson, serializeCustomer } from './serialize-customer.js';
export { type EventJson, eventJson, eventListInput, serializeEvent } from './serialize-event.js';
export {
  type MetadataJson,
  type MetafieldJson,
  type MetafieldScopeJson,
  metadataJson,
  metafieldJson,
  type PaginationJson,
  serializeMetadataList,
  serializeMetafieldList,
} from './serialize-metafield.js';
export { type NoteJson, noteJson, serializeNote } from './serialize-note.js';
export { serializePaymentProfile } from './serialize-payment-profile.js';
export { type ProductJson, productJson, serializeProduct } from './serialize-product.js';
export { type ProductFamilyJson, productFamilyJson, serializeProductFamily } from './serialize-product-family.js';
export { type ReferralCodeJson, serializeReferralCode } from './serialize-referral-code.js';
export { type SiteJson, serializeSite } from './serialize-site.js';
export { type SubscriptionJson, serializeSubscription, subscriptionJson } from './serialize-subscription.js';
export { serializeTransaction, type TransactionJson, transactionJson } from './serialize-transaction.js';
export {
  type EndpointJson,
  endpointJson,
  serializeEndpoint,
  serializeWebhook,
  type WebhookJson,
  webhookJson,
} from './serialize-webhook.js';
export * from './site-extra-wire.js';
export {
  asProductChangeError,
  cancelSubscriptionFields,
  cancelSubscriptionRequest,
  delayedCancelFields,
  delayedCancelRequest,
  holdFields,
  holdRequest,
  reactivateParams,
  type SubscriptionProductChange,
  type SubscriptionUpdate,
  updateSubscriptionFields,
  updateSubscriptionRequest,
} from './subscription-change-requests.js';
export * from './subscription-coupon-wire.js';
export * from './subscription-extra-wire.js';
export { subscriptionListQuery } from './subscription-list-query.js';
export {
  createSubscriptionFields,
  createSubscriptionRequest,
  isGiven,
  signupComponentFields,
} from './subscription-request.js';
export { refuseUniquenessToken, uniquenessTokenOf } from './uniqueness-token.js';
export {
  endpointFields,
  endpointRequest,
  endpointUpdateFields,
  endpointUpdateRequest,
  replayIdsOf,
  webhookListQuery,
} from './webhook-request.js';
export { type WireCompat, type WireContext, wireState, wireTimestamp } from './wire-context.js';
export {
  defineWireRequest,
  INVALID_JSON_MESSAGE,
  isPlainObject,
  type JsonBodyResult,
  parseJsonBody,
  parseOptionalWireRequest,
  parseWireParams,
  parseWireRequest,
  parseWireRequestList,
  type WireRequest,
} from './wire-request.js';
export {
  wireBoolean,
  wireCardExpiry,
  wireCardNumber,
  wireCents,
  wireDecimal,
  wireId,
  wireIdOrHandle,
  wireInteger,
  wireIntervalUnit,
  wireSnapDay,
  wireText,
  wireTimestampInput,
} from './wire-scalars.js';
