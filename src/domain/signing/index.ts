/**
 * Signing and secrets for the service's authentication schemes: constant-time comparison, hashed API
 * keys and passwords, direct-post request/response signatures, nonces and timestamps, the
 * `secure[data]` encoding and its precedence over normal params, hosted page tokens, and webhook
 * signatures and bodies. Pure functions over their arguments: no clock, no ambient randomness.
 */
export { type ApiKey, apiKeyPrefix, generateApiKey } from './api-key.js';
export { constantTimeEqual, constantTimeHexEqual } from './constant-time-equal.js';
export { assertNonce, DIRECT_NONCE_MAX_LENGTH, generateNonce } from './direct-nonce.js';
export {
  type DirectRequestSignatureParams,
  type DirectResponseSignatureParams,
  directRequestSignature,
  directResponseSignature,
  verifyDirectRequestSignature,
  verifyDirectResponseSignature,
} from './direct-signature.js';
export { parseDirectTimestamp } from './direct-timestamp.js';
export type { FormInput, FormInputValue, FormParams, FormScalar, FormValue } from './form-params.js';
export { generateSecret, type SecretEncoding } from './generate-secret.js';
export { HOSTED_PAGE_TOKEN_LENGTH, hostedPageToken, verifyHostedPageToken } from './hosted-page-token.js';
export {
  CUSTOMER_TYPED_SIGNUP_FIELDS,
  type FormPath,
  mergeSecureParams,
  unsignedBillingFields,
} from './merge-secure-params.js';
export { FORM_DEPTH_LIMIT, FORM_PARAMETER_LIMIT } from './parse-form.js';
export type { RandomSource } from './random-source.js';
export { hashSecret, secretHashMatches, sha256Hex, verifySecret } from './secret-hash.js';
export { encodeSecureData, parseSecureData } from './secure-data.js';
export { encodeWebhookBody, parseWebhookBody } from './webhook-body.js';
export {
  fillSignatureTemplate,
  verifyWebhookSignature,
  type WebhookSignatureAlgorithm,
  webhookSignatureHmacSha256,
  webhookSignatureMd5,
} from './webhook-signature.js';
