import type { FormInput, FormInputValue } from './form-params.js';

/**
 * How one flavour of bracket-notation form string is written. `encode` escapes one key segment or
 * value; `arrays` picks Rack's `list[]=x` or the indexed `list[0]=x`; `nil` picks whether a nil value
 * is the bare key (`key`) or an empty value (`key=`).
 */
export interface NestedQueryStyle {
  readonly encode: (text: string) => string;
  readonly arrays: 'brackets' | 'indices';
  readonly nil: 'bare-key' | 'empty-value';
}

/**
 * Writes `input` as `&`-joined `key=value` pairs in bracket notation (`a[b][c]=v`), escaping each key
 * segment and value on its own and leaving the structural brackets literal, as Rack's
 * `build_nested_query` does. Written by hand rather than with `qs.stringify` because qs hands its
 * encoder the whole key (`a[b][c]`), so it cannot tell structural brackets from brackets inside a
 * key name, and it drops `undefined` values where Ruby would write `nil`. Empty lists and empty
 * objects produce no pairs (Rack drops them too). Keys named in `leadingKeys` are written first, in
 * that order; the rest follow in `Object.entries` order.
 */
export function buildNestedQuery(
  input: FormInput,
  style: NestedQueryStyle,
  leadingKeys: readonly string[] = [],
): string {
  const pairs: string[] = [];
  // Entries are reordered as a list, not by building a new object, so that integer-like keys and an
  // own "__proto__" key keep their place and their value.
  const entries = Object.entries(input);
  const leading = leadingKeys.flatMap((key) => entries.filter(([entryKey]) => entryKey === key));
  const rest = entries.filter(([key]) => !leadingKeys.includes(key));
  for (const [key, value] of [...leading, ...rest]) appendPairs(pairs, style.encode(key), value, style);
  return pairs.join('&');
}

function isList(value: FormInputValue): value is readonly FormInputValue[] {
  return Array.isArray(value);
}

function appendPairs(pairs: string[], prefix: string, value: FormInputValue, style: NestedQueryStyle): void {
  if (value === null || value === undefined) {
    pairs.push(style.nil === 'bare-key' ? prefix : `${prefix}=`);
  } else if (isList(value)) {
    value.forEach((item, index) => {
      appendPairs(pairs, `${prefix}[${style.arrays === 'brackets' ? '' : index}]`, item, style);
    });
  } else if (typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) appendPairs(pairs, `${prefix}[${style.encode(key)}]`, item, style);
  } else {
    pairs.push(`${prefix}=${style.encode(String(value))}`);
  }
}

function safeByteTable(extra: string): Uint8Array {
  const table = new Uint8Array(256);
  const safe = `ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789${extra}`;
  for (let i = 0; i < safe.length; i += 1) table[safe.charCodeAt(i)] = 1;
  return table;
}

function percentEncode(text: string, safe: Uint8Array, spaceAsPlus: boolean): string {
  // Working on UTF-8 bytes (not encodeURIComponent) means a lone surrogate becomes U+FFFD instead of
  // throwing a URIError in the middle of building a redirect or a webhook.
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    if (safe[byte] === 1) out += String.fromCharCode(byte);
    else if (spaceAsPlus && byte === 0x20) out += '+';
    else out += `%${byte < 16 ? '0' : ''}${byte.toString(16).toUpperCase()}`;
  }
  return out;
}

const WWW_FORM_SAFE = safeByteTable('*-._');
const RFC3986_SAFE = safeByteTable('-._~');

/**
 * Ruby's `URI.encode_www_form_component`, which Rack uses for `secure[data]`: `A-Za-z0-9*-._` stay,
 * space becomes `+`, every other UTF-8 byte becomes uppercase `%XX` (`!` is `%21`, `:` is `%3A`).
 */
export function encodeWwwFormComponent(text: string): string {
  return percentEncode(text, WWW_FORM_SAFE, true);
}

/**
 * The escaping seen in the service's webhook bodies: `encodeURIComponent` with `!'()*` escaped as
 * well, i.e. only RFC 3986 unreserved characters (`A-Za-z0-9-._~`) stay and space is `%20`.
 */
export function encodeRfc3986Component(text: string): string {
  return percentEncode(text, RFC3986_SAFE, false);
}
