/**
 * What the wire boundary refuses before any command runs: text a database cannot store (NUL, which
 * Postgres refuses in every text column, and lone UTF-16 surrogates, which no UTF-8 encoder can
 * write and so would be stored as something else), bodies that are not UTF-8, and JSON nested
 * deeper than any request of the API needs (recursive code further in, from schema checks to form
 * flattening, would otherwise run out of stack). Every check here is iterative.
 */
import { INVALID_JSON_MESSAGE, parseJsonBody } from './wire-request.js';

/** The deepest nesting of arrays and objects a JSON request body may have (the API's own bodies need 5). */
export const MAX_JSON_DEPTH = 32;

/** The message of a body, path or query that carries text the service cannot store (answered with 422). */
export const INVALID_TEXT_MESSAGE =
  'Request: contains a NUL character, a lone UTF-16 surrogate or bytes that are not UTF-8, which cannot be stored.';

/** The message of a JSON body nested deeper than `maxDepth` (answered with 422). */
export function jsonTooDeepMessage(maxDepth: number): string {
  return `Body: is nested more than ${maxDepth} levels deep.`;
}

// A surrogate that is not half of a pair.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True for text every storage keeps as it is: no NUL and no lone surrogate. */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}

/**
 * True when a parsed JSON value (or a form's pairs) holds a string or an object key that is not
 * {@link isStorableText}. Walks with an explicit stack, so any depth is safe.
 */
export function containsUnstorableText(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') {
      if (!isStorableText(item)) return true;
    } else if (Array.isArray(item)) {
      for (const element of item) stack.push(element);
    } else if (typeof item === 'object' && item !== null) {
      for (const [key, element] of Object.entries(item)) {
        if (!isStorableText(key)) return true;
        stack.push(element);
      }
    }
  }
  return false;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as UTF-8 text, or undefined when they are not valid UTF-8 (a BOM is kept, for the caller to drop). */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * True when a raw (still percent-encoded) path, query string or form body decodes to storable
 * text: no NUL, written raw or as `%00`, and no lone surrogate. Escapes that are not UTF-8
 * (`%ED%A0%80`, `%E0%A4%A`, `%zz`) are never decoded by the router or the query parser
 * (`decodeURIComponent` refuses them and the text is kept as sent), and a form decodes them as
 * U+FFFD, so they cannot put invalid text into a command and are left to the routes.
 */
export function isStorablePercentEncoded(raw: string): boolean {
  return isStorableText(raw) && !/%00/.test(raw);
}

/**
 * True when a JSON text nests arrays and objects more than `maxDepth` deep. Counts brackets
 * outside strings in one pass without recursion and stops at the first level past the limit, so
 * it costs at most one scan whatever the input. It does not check the syntax: JSON.parse does.
 */
export function jsonNestedDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c)
        i++; // a backslash escapes the next character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x5b || code === 0x7b) {
      depth++;
      if (depth > maxDepth) return true;
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** Why a request body was refused: not JSON (400), too deep or unstorable text (422). */
export type JsonRequestRefusal = 'syntax' | 'depth' | 'text';

/** A request body read as JSON: its value (undefined for an empty body), or why it was refused. */
export type JsonRequestBody =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly refusal: JsonRequestRefusal; readonly message: string };

/** Options of {@link readJsonRequestBody}. */
export interface JsonRequestBodyOptions {
  /** Default {@link MAX_JSON_DEPTH}. */
  readonly maxDepth?: number;
}

/**
 * Reads a raw request body as JSON at the wire boundary: the bytes must be UTF-8 (`text`), no deeper
 * than `maxDepth` (`depth`, checked before parsing), valid JSON (`syntax`, see `parseJsonBody`:
 * an empty or blank body is `undefined`), and every string and key must be storable text (`text`).
 */
export function readJsonRequestBody(body: Uint8Array | string, options: JsonRequestBodyOptions = {}): JsonRequestBody {
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  const text = typeof body === 'string' ? body : decodeUtf8(body);
  if (text === undefined) return { ok: false, refusal: 'text', message: INVALID_TEXT_MESSAGE };
  if (jsonNestedDeeperThan(text, maxDepth))
    return { ok: false, refusal: 'depth', message: jsonTooDeepMessage(maxDepth) };
  const parsed = parseJsonBody(text);
  if (!parsed.ok) return { ok: false, refusal: 'syntax', message: parsed.message || INVALID_JSON_MESSAGE };
  if (containsUnstorableText(parsed.value)) return { ok: false, refusal: 'text', message: INVALID_TEXT_MESSAGE };
  return { ok: true, value: parsed.value };
}
