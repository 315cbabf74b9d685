/**
 * The wire layer: zod schemas that read the service's JSON request bodies and query strings into
 * the engine's inputs, and serializers that write the engine's records as the service's JSON.
 * It knows nothing of HTTP; bindings (see `examples/http`) route requests through it.
 */
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
  DEFAULT_PER_PAGE,
  type ListPage,
  MAX_PER_PAGE,
  pageOf,
  pageQuery,
  parseQueryString,
  type TransactionListQuery,
  transactionListQuery,
} from './list-query.js';
export { productFamilyFields, productFamilyRequest } from './product-family-request.js';
export { productFields, productRequest } from './product-request.js';
export { type CreditCardJson, creditCardJson } from './serialize-credit-card.js';
export { type CustomerJson, customerJson, serializeCustomer } from './serialize-customer.js';
export { serializePaymentProfile } from './serialize-payment-profile.js';
export { type ProductJson, productJson, serializeProduct } from './serialize-product.js';
export { type ProductFamilyJson, productFamilyJson, serializeProductFamily } from './serialize-product-family.js';
export { type SubscriptionJson, serializeSubscription, subscriptionJson } from './serialize-subscription.js';
export { serializeTransaction, type TransactionJson, transactionJson } from './serialize-transaction.js';
export {
  cancelSubscriptionFields,
  cancelSubscriptionRequest,
  delayedCancelFields,
  delayedCancelRequest,
  holdFields,
  holdRequest,
  reactivateParams,
  type SubscriptionUpdate,
  updateSubscriptionFields,
  updateSubscriptionRequest,
} from './subscription-change-requests.js';
export { subscriptionListQuery } from './subscription-list-query.js';
export { createSubscriptionFields, createSubscriptionRequest, isGiven } from './subscription-request.js';
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
  type WireRequest,
} from './wire-request.js';
export {
  wireBoolean,
  wireCardExpiry,
  wireCardNumber,
  wireCents,
  wireId,
  wireInteger,
  wireIntervalUnit,
  wireText,
  wireTimestampInput,
} from './wire-scalars.js';
