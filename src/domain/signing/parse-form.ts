import qs from 'qs';
import type { FormParams, FormValue } from './form-params.js';

/** How many `&`-separated pairs a form string may hold; later pairs are ignored (qs `parameterLimit`). */
export const FORM_PARAMETER_LIMIT = 1000;

/** How many bracket levels are expanded; deeper brackets stay part of the last key (qs `depth`). */
export const FORM_DEPTH_LIMIT = 10;

// qs's default arrayLimit (20) turns `list[21]=x` into an object keyed "21", which would change the
// shape of a long webhook list. A list can never hold more entries than there are parameters, so the
// parameter limit is the natural bound; qs compacts sparse indices, so a huge index costs nothing.
const PARSE_OPTIONS = {
  depth: FORM_DEPTH_LIMIT,
  parameterLimit: FORM_PARAMETER_LIMIT,
  arrayLimit: FORM_PARAMETER_LIMIT,
  allowPrototypes: false,
  allowDots: false,
  strictNullHandling: false,
  ignoreQueryPrefix: false,
  charset: 'utf-8',
} as const;

/**
 * Parses a bracket-notation form string with qs into a {@link FormParams}: `=`-less keys become
 * `''`, `+` is a space, `a[b]` nests, `a[]` and `a[0]` make lists, repeated plain keys collect into a
 * list. Keys that would shadow `Object.prototype` members (`__proto__`, `constructor`, `toString`)
 * are dropped, which is qs's `allowPrototypes: false` protection against prototype pollution.
 * Known difference from Rack: a list of objects written Rack-style (`l[][a]=1&l[][a]=2`) parses as
 * one object with a list (`l: [{ a: ['1', '2'] }]`), not as two objects.
 */
export function parseForm(text: string): FormParams {
  return toFormParams(qs.parse(text, PARSE_OPTIONS));
}

type QsValue = qs.ParsedQs[string];

function toFormParams(parsed: qs.ParsedQs): FormParams {
  const out: Record<string, FormValue> = {};
  for (const [key, value] of Object.entries(parsed)) {
    const converted = toFormValue(value);
    if (converted !== undefined) out[key] = converted;
  }
  return out;
}

function toFormValue(value: QsValue): FormValue | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? item : toFormParams(item)));
  return toFormParams(value);
}
