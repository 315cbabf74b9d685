import { buildNestedQuery, encodeWwwFormComponent, type NestedQueryStyle } from './form-encoding.js';
import type { FormInput, FormParams } from './form-params.js';
import { parseForm } from './parse-form.js';

const RACK_STYLE: NestedQueryStyle = { encode: encodeWwwFormComponent, arrays: 'brackets', nil: 'bare-key' };

/**
 * Encodes tamper-proof parameters as a `secure[data]` string exactly as the chargify2 gem does with
 * Rack's `build_nested_query`: pairs joined by `&`, bracket nesting `a[b][c]=v`, lists as `list[]=x`,
 * structural brackets literal, key segments and values escaped like Ruby's
 * `URI.encode_www_form_component` (space `+`, `!` `%21`, `:` `%3A`), insertion order kept, and a
 * nil value written as the bare key. Sign the returned string itself; never re-encode to verify.
 */
export function encodeSecureData(data: FormInput): string {
  return buildNestedQuery(data, RACK_STYLE);
}

/**
 * Parses a posted `secure[data]` string into a plain nested object:
 * `=` may be omitted for an empty value, `+` is a space, bracket nesting gives objects and
 * `hobbies[0]` / `hobbies[]` give lists. At most 1000 pairs and 10 bracket levels are expanded, and
 * prototype-shadowing keys are dropped. Verify the signature over the raw string before trusting this.
 */
export function parseSecureData(text: string): FormParams {
  return parseForm(text);
}
