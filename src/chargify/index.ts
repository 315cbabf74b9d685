/**
 * `billing-engine/chargify`: the Chargify-compatible wire format, for bindings and for clients of
 * a billing-engine server. Request parsers (zod schemas that read the service's JSON bodies and
 * query strings into the engine's inputs), serializers (the engine's records as the service's
 * JSON), error bodies, the webhook body format and signatures, the direct-post form signing and
 * redirect checks, and the verification of received webhooks. None of it knows HTTP; the HTTP
 * binding (`billing-engine/http`) routes requests through it. The engine itself is the package root.
 */
export {
  type BuildSecureFieldsOptions,
  buildSecureFields,
  type DirectRedirectCredentials,
  type DirectRedirectResult,
  escapeHtml,
  type SecureFields,
  type SecureFieldValues,
  verifyDirectRedirect,
} from '../direct-post-helpers.js';
export {
  constantTimeEqual,
  directRequestSignature,
  directResponseSignature,
  encodeSecureData,
  encodeWebhookBody,
  hostedPageToken,
  parseSecureData,
  parseWebhookBody,
  verifyDirectRequestSignature,
  verifyDirectResponseSignature,
  verifyHostedPageToken,
  verifyWebhookSignature,
  webhookSignatureHmacSha256,
  webhookSignatureMd5,
} from '../domain/signing/index.js';
export {
  DIRECT_NONCE_SCOPE,
  DIRECT_SUCCESS_RESULT_CODE,
  type DirectCallError,
  type DirectCallJson,
  type DirectCallResult,
  directCallJson,
  formParamsFromJson,
  parseDirectForm,
} from '../services/direct-post-service.js';
export {
  CHARGIFY_WEBHOOK_SIGNATURE_HEADER,
  type RejectedWebhook,
  type VerifiedWebhook,
  type VerifyWebhookInput,
  verifyWebhook,
  WEBHOOK_SIGNATURE_HEADER,
  webhookSignatureFrom,
} from '../webhook-receiver.js';
export * from '../wire/index.js';
