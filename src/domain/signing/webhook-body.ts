import { buildNestedQuery, encodeRfc3986Component, type NestedQueryStyle } from './form-encoding.js';
import type { FormInput, FormParams } from './form-params.js';
import { parseForm } from './parse-form.js';

const WEBHOOK_STYLE: NestedQueryStyle = { encode: encodeRfc3986Component, arrays: 'indices', nil: 'empty-value' };

/**
 * Encodes a webhook as the service's form body: `id` and `event` first (wherever they are in
 * `fields`), then everything else, normally `payload`, in bracket notation with indexed lists
 * (`payload[statement][events][0][id]=1`). Values and key segments are escaped like
 * `encodeURIComponent` plus `!'()*`, so a space is `%20` and `:` is `%3A`; brackets stay literal;
 * nil is `key=`; booleans are `true`/`false`. Sign the returned string as is.
 */
export function encodeWebhookBody(fields: FormInput): string {
  return buildNestedQuery(fields, WEBHOOK_STYLE, ['id', 'event']);
}

/**
 * Parses a webhook form body (raw text or bytes) into a plain nested object with the same qs rules
 * as secure data: bracket nesting, indexed lists, at most 1000 pairs and 10 levels, no
 * prototype-shadowing keys. Verify the signature over the raw body before parsing it.
 */
export function parseWebhookBody(body: string | Uint8Array): FormParams {
  return parseForm(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
}
