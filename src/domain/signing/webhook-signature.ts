import { createHash, createHmac } from 'node:crypto';
import { hexDigestEquals, isHexOfLength } from './constant-time-equal.js';

/**
 * A webhook signature algorithm: the current HMAC-SHA256 (`X-Service-Webhook-Signature-Hmac-Sha-256`)
 * or the deprecated MD5 of key plus body (`X-Chargify-Webhook-Signature`), still sent for old receivers.
 */
export type WebhookSignatureAlgorithm = 'hmac-sha256' | 'md5';

/**
 * The current webhook signature: lowercase hex HMAC-SHA256 of the raw body keyed with the site's
 * shared key. Pass the exact bytes sent or received; any re-encoding breaks it.
 */
export function webhookSignatureHmacSha256(body: string | Uint8Array, sharedKey: string): string {
  return createHmac('sha256', sharedKey).update(body).digest('hex');
}

/**
 * The legacy webhook signature: lowercase hex MD5 of `sharedKey + body`. It is a plain hash of the
 * concatenation, not an HMAC, and is weak (length extension, MD5); it exists only because the
 * service still sends it and old receivers check it.
 */
export function webhookSignatureMd5(body: string | Uint8Array, sharedKey: string): string {
  return createHash('md5').update(sharedKey, 'utf8').update(body).digest('hex');
}

/**
 * True when `signatureHex` is the signature of the raw `body` under `sharedKey` with `algorithm`
 * (HMAC-SHA256 unless told otherwise). Either hex case is accepted, the comparison is constant time,
 * and a missing or malformed signature is `false` rather than an exception.
 */
export function verifyWebhookSignature(
  body: string | Uint8Array,
  signatureHex: unknown,
  sharedKey: string,
  algorithm: WebhookSignatureAlgorithm = 'hmac-sha256',
): boolean {
  const expected =
    algorithm === 'md5' ? webhookSignatureMd5(body, sharedKey) : webhookSignatureHmacSha256(body, sharedKey);
  if (!isHexOfLength(signatureHex, expected.length)) return false;
  return hexDigestEquals(Buffer.from(expected, 'hex'), signatureHex);
}

/**
 * Fills a merchant's endpoint URL template: every `{signature_hmac_sha_256}` becomes `hmacSignature`
 * and, when `md5Signature` is given, every legacy `{signature}` becomes it. The
 * percent-encoded spellings (`%7Bsignature%7D`) are replaced too, because a URL that went through
 * `new URL()` or a form field arrives with its braces escaped. Hex needs no further escaping.
 */
export function fillSignatureTemplate(url: string, hmacSignature: string, md5Signature?: string): string {
  const filled = url.replace(/(?:\{|%7B)signature_hmac_sha_256(?:\}|%7D)/gi, hmacSignature);
  if (md5Signature === undefined) return filled;
  return filled.replace(/(?:\{|%7B)signature(?:\}|%7D)/gi, md5Signature);
}
