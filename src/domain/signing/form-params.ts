/**
 * A leaf value accepted by the form encoders. Numbers, bigints and booleans are written with
 * `String()`; `null` and `undefined` stand for Ruby's `nil` (each encoder documents how it spells it).
 */
export type FormScalar = string | number | bigint | boolean | null | undefined;

/** Any value accepted by the form encoders: a scalar, a list, or a nested {@link FormInput}. */
export type FormInputValue = FormScalar | readonly FormInputValue[] | FormInput;

/**
 * A nested record to encode as a bracket-notation form string. Keys are written in
 * `Object.entries` order, which is insertion order except that integer-like keys ("0", "42") come
 * first; that is a JS object rule the encoders cannot undo.
 */
export interface FormInput {
  readonly [key: string]: FormInputValue;
}

/** A value parsed from a bracket-notation form string: text, a list, or a nested {@link FormParams}. */
export type FormValue = string | readonly FormValue[] | FormParams;

/**
 * A parsed form string (`secure[data]`, a webhook body) as a plain nested object: every leaf is a
 * string (`=`-less keys give `''`), bracket nesting gives objects, `[]` and numeric indices give lists.
 */
export interface FormParams {
  readonly [key: string]: FormValue;
}
