/**
 * Helpers for a merchant's own pages that post to the direct interface: build the hidden
 * `secure[...]` fields of a signup or card-update form, and verify the redirect the service sends the
 * browser back with. They run in the merchant's server (the secret must never reach the browser).
 */
import {
  directRequestSignature,
  encodeSecureData,
  type FormInput,
  generateNonce,
  type RandomSource,
  verifyDirectResponseSignature,
} from './domain/signing/index.js';

/** Input of {@link buildSecureFields}. */
export interface BuildSecureFieldsOptions {
  /** The direct API user's public id. */
  readonly apiId: string;
  /** The direct API user's signing secret. Stays on the merchant's server. */
  readonly apiSecret: string;
  /**
   * Tamper-proof parameters (`secure[data]`), e.g. `{ signup: { product: { handle: 'pro' } } }` or a
   * card update's `{ subscription_id: 42 }`. They override normal form fields of the same name.
   */
  readonly data?: FormInput;
  /** Where the service redirects afterwards; written first into `secure[data]` as `redirect_uri`. */
  readonly redirectUri?: string;
  /** The instant the form is built; its whole seconds are the signed timestamp. */
  readonly now: Date;
  /** Where the nonce's random bytes come from; `node:crypto` by default. */
  readonly random?: RandomSource;
}

/** The `secure[...]` form fields by name, in the order they are written. `secure[data]` only when there is data. */
export interface SecureFieldValues {
  readonly 'secure[api_id]': string;
  readonly 'secure[timestamp]': string;
  readonly 'secure[nonce]': string;
  readonly 'secure[data]'?: string;
  readonly 'secure[signature]': string;
}

/** What {@link buildSecureFields} returns: the signed parts, the fields by name, and their HTML. */
export interface SecureFields {
  readonly apiId: string;
  readonly timestamp: string;
  readonly nonce: string;
  /** The exact `secure[data]` string that was signed (empty when there is no data). */
  readonly data: string;
  readonly signature: string;
  readonly fields: SecureFieldValues;
  /** One `<input type="hidden">` per field, names and values HTML-escaped. */
  readonly html: string;
}

/**
 * Builds the hidden `secure[...]` fields of a direct-post form: a fresh 40-hex nonce, the timestamp
 * of `now` in whole seconds, `secure[data]` encoded as the service's reference client encodes it
 * (`redirect_uri` first), and the request signature over `api_id + timestamp + nonce + data`. The
 * HTML escapes `&`, `<`, `>`, `"` and `'`, so the browser posts back exactly the string that was
 * signed (the data is HTML-entity-escaped when put in a form value).
 */
export function buildSecureFields(options: BuildSecureFieldsOptions): SecureFields {
  const seconds = Math.floor(options.now.getTime() / 1000);
  if (!Number.isSafeInteger(seconds) || seconds < 0) throw new RangeError('now must be an instant after 1970-01-01');
  const timestamp = String(seconds);
  const nonce = options.random === undefined ? generateNonce() : generateNonce(options.random);
  const input: FormInput =
    options.redirectUri === undefined
      ? (options.data ?? {})
      : { redirect_uri: options.redirectUri, ...withoutRedirect(options.data) };
  const data = encodeSecureData(input);
  const signature = directRequestSignature({ apiId: options.apiId, timestamp, nonce, data }, options.apiSecret);
  const fields: SecureFieldValues = {
    'secure[api_id]': options.apiId,
    'secure[timestamp]': timestamp,
    'secure[nonce]': nonce,
    ...(data === '' ? {} : { 'secure[data]': data }),
    'secure[signature]': signature,
  };
  const html = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  return { apiId: options.apiId, timestamp, nonce, data, signature, fields, html };
}

function withoutRedirect(data: FormInput | undefined): FormInput {
  if (data === undefined) return {};
  const { redirect_uri: _ignored, ...rest } = data;
  return rest;
}

/**
 * Escapes text for an HTML attribute value or text node: `&`, `<`, `>`, `"` and `'` become
 * entities, so no value can close the attribute or open a tag.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ENTITIES[ch] ?? ch);
}

const HTML_ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** The merchant's direct credentials, for {@link verifyDirectRedirect}. */
export interface DirectRedirectCredentials {
  readonly apiId: string;
  readonly apiSecret: string;
}

/**
 * What a redirect back from the service says. `ok` is true only when all seven parameters are
 * present once and the signature verifies for the merchant's own `api_id`; the other fields are
 * what the query carried (empty strings when missing), so a failure can still be logged. `success`
 * is `ok` and `status_code` 200, the reference client's test.
 */
export interface DirectRedirectResult {
  readonly ok: boolean;
  readonly success: boolean;
  readonly statusCode: string;
  readonly resultCode: string;
  readonly callId: string;
  readonly timestamp: string;
  readonly nonce: string;
}

const REDIRECT_PARAMS = ['api_id', 'timestamp', 'nonce', 'status_code', 'result_code', 'call_id', 'signature'] as const;

/**
 * Verifies the query string of the service's redirect (`?api_id=...&signature=...`, a URL, or
 * URLSearchParams): HMAC-SHA1 with `apiSecret` over `api_id + timestamp + nonce + status_code +
 * result_code + call_id`, compared in constant time. The signature is computed with the caller's own
 * `apiId`, never the one in the query, so a response signed for another API user fails.
 * A parameter that is missing or repeated makes the result not ok.
 */
export function verifyDirectRedirect(
  query: string | URL | URLSearchParams,
  credentials: DirectRedirectCredentials,
): DirectRedirectResult {
  const search =
    query instanceof URLSearchParams ? query : new URLSearchParams(query instanceof URL ? query.search : query);
  const values: Partial<Record<(typeof REDIRECT_PARAMS)[number], string>> = {};
  let complete = true;
  for (const name of REDIRECT_PARAMS) {
    const all = search.getAll(name);
    if (all.length !== 1) complete = false;
    else values[name] = all[0];
  }
  const statusCode = values.status_code ?? '';
  const resultCode = values.result_code ?? '';
  const callId = values.call_id ?? '';
  const timestamp = values.timestamp ?? '';
  const nonce = values.nonce ?? '';
  const ok =
    complete &&
    values.api_id === credentials.apiId &&
    verifyDirectResponseSignature(
      { apiId: credentials.apiId, timestamp, nonce, statusCode, resultCode, callId },
      credentials.apiSecret,
      values.signature,
    );
  return { ok, success: ok && statusCode === '200', statusCode, resultCode, callId, timestamp, nonce };
}
