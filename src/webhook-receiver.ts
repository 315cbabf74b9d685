/**
 * For merchants receiving webhooks: verify a webhook from its raw body and signature header, in
 * constant time, and only then parse it. Use the body exactly as received (the raw bytes, before
 * any body parser): the signature covers those bytes, and re-encoding the parsed form breaks it.
 */
import { type FormParams, parseWebhookBody, verifyWebhookSignature } from './domain/signing/index.js';

/** The signature header of the spec, lower case as Node's `IncomingMessage.headers` has it. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-service-webhook-signature-hmac-sha-256';

/** The hosted service's spelling of the same header, sent under `chargify` compatibility. */
export const CHARGIFY_WEBHOOK_SIGNATURE_HEADER = 'x-chargify-webhook-signature-hmac-sha-256';

/** Input of {@link verifyWebhook}. */
export interface VerifyWebhookInput {
  /** The request body exactly as received. */
  readonly rawBody: string | Uint8Array;
  /**
   * The value of `X-Service-Webhook-Signature-Hmac-Sha-256` (or of the `{signature_hmac_sha_256}`
   * URL variable): hex HMAC-SHA256, either case. A header given as a list must hold exactly one value.
   */
  readonly signature: string | readonly string[] | null | undefined;
  /** The site's shared key. */
  readonly sharedKey: string;
}

/** A verified webhook: its id and event key, and the parsed `payload[...]` tree. */
export interface VerifiedWebhook {
  readonly ok: true;
  /** The webhook id (stable across retries and replays: use it to ignore duplicates); undefined if the body has none. */
  readonly id: string | undefined;
  readonly event: string | undefined;
  /** The nested `payload` (`payload.subscription.state`); every leaf is a string, as in any form body. */
  readonly payload: FormParams;
  /** The whole parsed body. */
  readonly fields: FormParams;
}

/** A webhook whose signature did not match: nothing of its body is parsed or returned. */
export interface RejectedWebhook {
  readonly ok: false;
  readonly id: undefined;
  readonly event: undefined;
  readonly payload: undefined;
  readonly fields: undefined;
}

const REJECTED: RejectedWebhook = Object.freeze({
  ok: false,
  id: undefined,
  event: undefined,
  payload: undefined,
  fields: undefined,
});

function single(signature: VerifyWebhookInput['signature']): string | undefined {
  if (typeof signature === 'string') return signature.trim();
  // Two signature headers are ambiguous; an attacker could add one, so none is trusted.
  if (Array.isArray(signature) && signature.length === 1 && typeof signature[0] === 'string')
    return signature[0].trim();
  return undefined;
}

/**
 * Verifies a received webhook: `ok` when `signature` is the hex HMAC-SHA256 of `rawBody` keyed with
 * `sharedKey`, compared in constant time; then, and only then, the body is parsed (bracket
 * notation, at most 1000 fields and 10 levels). A missing, malformed or wrong signature, or an
 * empty shared key, gives `{ ok: false }` and never throws.
 */
export function verifyWebhook(input: VerifyWebhookInput): VerifiedWebhook | RejectedWebhook {
  const signature = single(input.signature);
  if (signature === undefined || typeof input.sharedKey !== 'string' || input.sharedKey === '') return REJECTED;
  const raw = input.rawBody;
  if (typeof raw !== 'string' && !(raw instanceof Uint8Array)) return REJECTED;
  if (!verifyWebhookSignature(raw, signature, input.sharedKey)) return REJECTED;
  const fields = parseWebhookBody(raw);
  const payload = fields.payload;
  return {
    ok: true,
    id: typeof fields.id === 'string' ? fields.id : undefined,
    event: typeof fields.event === 'string' ? fields.event : undefined,
    payload: typeof payload === 'object' && !Array.isArray(payload) ? (payload as FormParams) : {},
    fields,
  };
}

/**
 * The signature header of a request, from Node's `IncomingMessage.headers` (lower-case keys) or a
 * fetch `Headers`: the spec's header, else the hosted service's spelling.
 */
export function webhookSignatureFrom(
  headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>,
): string | readonly string[] | undefined {
  if (typeof (headers as Headers).get === 'function') {
    const h = headers as Headers;
    return h.get(WEBHOOK_SIGNATURE_HEADER) ?? h.get(CHARGIFY_WEBHOOK_SIGNATURE_HEADER) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  return record[WEBHOOK_SIGNATURE_HEADER] ?? record[CHARGIFY_WEBHOOK_SIGNATURE_HEADER];
}
