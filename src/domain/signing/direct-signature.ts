import { createHmac } from 'node:crypto';
import { hexDigestMatches } from './constant-time-equal.js';

/**
 * The signed parts of a direct-post request (`secure[...]` fields). Optional parts that were not
 * posted are left out or undefined and count as empty strings. `data` must be the raw `secure[data]`
 * string exactly as posted, never a re-serialisation of its parsed form: key order and encoding
 * details would change and the signature would no longer match.
 */
export interface DirectRequestSignatureParams {
  readonly apiId: string;
  readonly timestamp?: string | number | undefined;
  readonly nonce?: string | undefined;
  readonly data?: string | undefined;
}

/**
 * The signed parts of a direct-post response (the redirect's query parameters). For verification
 * `apiId` must be the verifier's own API id, not the one echoed in the query string, so that a
 * response signed for a different API user fails.
 */
export interface DirectResponseSignatureParams {
  readonly apiId: string;
  readonly timestamp: string | number;
  readonly nonce: string;
  readonly statusCode: string | number;
  readonly resultCode: string | number;
  readonly callId: string;
}

const SHA1_HEX_LENGTH = 40;

// Strings are hashed as UTF-8 by default; naming the encoding costs a lookup on every call.
function hmacSha1Hex(secret: string, message: string): string {
  return createHmac('sha1', secret).update(message).digest('hex');
}

function part(value: string | number | undefined): string {
  return typeof value === 'string' ? value : value === undefined ? '' : String(value);
}

/**
 * The direct-post request signature: lowercase hex HMAC-SHA1 keyed with `api_secret` over the plain
 * concatenation `api_id + timestamp + nonce + data`, with no separators and absent parts as empty
 * strings.
 */
export function directRequestSignature(params: DirectRequestSignatureParams, apiSecret: string): string {
  return hmacSha1Hex(apiSecret, params.apiId + part(params.timestamp) + part(params.nonce) + part(params.data));
}

/**
 * True when `signature` is the request signature of `params`. Upper- and lowercase hex are both
 * accepted; the comparison is constant time; anything that is not a 40-digit hex
 * string (missing, an array from a repeated form field, wrong length) is `false`, never an exception,
 * because this runs on untrusted form input.
 */
export function verifyDirectRequestSignature(
  params: DirectRequestSignatureParams,
  apiSecret: string,
  signature: unknown,
): boolean {
  // Malformed input is refused before any hashing; hexDigestMatches checks the characters.
  if (typeof signature !== 'string' || signature.length !== SHA1_HEX_LENGTH) return false;
  // Hex out of the HMAC and a constant-time compare of the hex text: cheaper than decoding the
  // signature into a Buffer for timingSafeEqual (a Buffer digest is itself slower than a hex one).
  return hexDigestMatches(directRequestSignature(params, apiSecret), signature);
}

/**
 * The direct-post response signature put on the redirect: lowercase hex HMAC-SHA1 keyed with
 * `api_secret` over `api_id + timestamp + nonce + status_code + result_code + call_id`.
 */
export function directResponseSignature(params: DirectResponseSignatureParams, apiSecret: string): string {
  return hmacSha1Hex(
    apiSecret,
    params.apiId +
      part(params.timestamp) +
      params.nonce +
      part(params.statusCode) +
      part(params.resultCode) +
      params.callId,
  );
}

/**
 * True when `signature` is the response signature of `params`, with the same rules as
 * {@link verifyDirectRequestSignature}: either hex case, constant time, malformed input is `false`.
 */
export function verifyDirectResponseSignature(
  params: DirectResponseSignatureParams,
  apiSecret: string,
  signature: unknown,
): boolean {
  if (typeof signature !== 'string' || signature.length !== SHA1_HEX_LENGTH) return false;
  return hexDigestMatches(directResponseSignature(params, apiSecret), signature);
}
