import type { z } from 'zod';
import { type BillingErrorDetail, validationError } from '../errors.js';

/**
 * A request body of the main API: one named wrapper key (`{"subscription":{...}}`) whose
 * object is read by `fields` into the engine's input. Build one with {@link defineWireRequest}.
 */
export interface WireRequest<T> {
  /** The wrapper key, e.g. `subscription`. */
  readonly wrapper: string;
  /** Reads the wrapped object into the engine's input; unknown keys are ignored. */
  readonly fields: z.ZodType<T>;
}

/** Declares the wrapper key and field schema of one request body. */
export function defineWireRequest<T>(wrapper: string, fields: z.ZodType<T>): WireRequest<T> {
  return { wrapper, fields };
}

/** The outcome of reading a raw body as JSON: the value, or the service-style message for 400. */
export type JsonBodyResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly message: string };

/** The message of a body that is not JSON (answered with 400). */
export const INVALID_JSON_MESSAGE = 'Body: is not valid JSON.';

/**
 * Reads a raw request body as JSON. An empty or blank body is `undefined`, not an error: clients
 * send empty bodies with any content type (the SDK's `clear_data` posts an empty form body), and
 * it is the route, not the parser, that knows whether a body was needed. A leading BOM is dropped.
 */
export function parseJsonBody(text: string): JsonBodyResult {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(trimmed) as unknown };
  } catch {
    return { ok: false, message: INVALID_JSON_MESSAGE };
  }
}

/**
 * Reads a parsed JSON body through a {@link WireRequest}. A body without the wrapper object, and
 * every problem inside it, becomes one `validation` BillingError (422) listing all messages in the
 * service's "Label: message." style, so a client sees every mistake at once.
 */
export function parseWireRequest<T>(request: WireRequest<T>, body: unknown): T {
  const wrapped = isPlainObject(body) ? body[request.wrapper] : undefined;
  if (!isPlainObject(wrapped)) {
    throw validationError([
      {
        message: `Request body: must be a JSON object with a "${request.wrapper}" object, like {"${request.wrapper}":{...}}.`,
        attribute: request.wrapper,
      },
    ]);
  }
  const result = request.fields.safeParse(wrapped);
  if (result.success) return result.data;
  throw validationError(result.error.issues.map((issue) => issueDetail(request.wrapper, issue)));
}

/**
 * Reads a body whose wrapper holds one object or a list of them (`{"metafields":{...}}` or
 * `{"metafields":[{...},{...}]}`, as the SDK may send either): every item goes through the same
 * field schema, and every problem of every item is reported at once (422). An empty list is
 * refused here, since a command that does nothing would still answer as if it had worked.
 */
export function parseWireRequestList<T>(request: WireRequest<T>, body: unknown): T[] {
  const wrapped = isPlainObject(body) ? body[request.wrapper] : undefined;
  const items = Array.isArray(wrapped) ? wrapped : isPlainObject(wrapped) ? [wrapped] : undefined;
  if (items === undefined || items.length === 0) {
    throw validationError([
      {
        message: `Request body: must be a JSON object with a "${request.wrapper}" object or a non-empty list of them.`,
        attribute: request.wrapper,
      },
    ]);
  }
  const parsed: T[] = [];
  const details: BillingErrorDetail[] = [];
  items.forEach((item, index) => {
    const result = request.fields.safeParse(item);
    if (result.success) parsed.push(result.data);
    else {
      for (const issue of result.error.issues) {
        details.push(issueDetail(request.wrapper, { ...issue, path: [index, ...issue.path] }));
      }
    }
  });
  if (details.length > 0) throw validationError(details);
  return parsed;
}

/**
 * Like {@link parseWireRequest} for bodies that may be left out (a DELETE that cancels, a delayed
 * cancellation): no body, or an empty object, reads as an empty wrapper. A body with keys but no
 * wrapper is still refused, because ignoring `{"cancel_at_end_of_period":1}` sent unwrapped would
 * cancel now what the client asked to cancel later.
 */
export function parseOptionalWireRequest<T>(request: WireRequest<T>, body: unknown): T {
  const empty = body === undefined || body === null || (isPlainObject(body) && Object.keys(body).length === 0);
  return parseWireRequest(request, empty ? { [request.wrapper]: {} } : body);
}

/**
 * Reads unwrapped parameters (a query string, or the top-level keys of a body such as
 * reactivation's `include_trial`) through a schema; problems become one `validation` BillingError
 * (422) whose messages are labelled like {@link parseWireRequest}'s. `name` labels a value that is
 * not an object at all.
 */
export function parseWireParams<T>(schema: z.ZodType<T>, value: unknown, name = 'parameters'): T {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  throw validationError(result.error.issues.map((issue) => issueDetail(name, issue, false)));
}

/** True for a JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Nested objects whose fields the service labels with the object's name ("Credit card expiration month").
const PARENT_LABELS: Readonly<Record<string, string>> = {
  credit_card_attributes: 'Credit card',
  payment_profile_attributes: 'Payment profile',
};

function issueDetail(wrapper: string, issue: z.core.$ZodIssue, wrapped = true): BillingErrorDetail {
  const keys = issue.path.filter((key): key is string => typeof key === 'string');
  const field = keys.at(-1);
  const parent = keys.at(-2);
  let label = humanize(field ?? wrapper);
  const prefix = parent === undefined ? undefined : PARENT_LABELS[parent];
  if (prefix !== undefined && !label.toLowerCase().startsWith(prefix.toLowerCase())) {
    label = `${prefix} ${label.charAt(0).toLowerCase()}${label.slice(1)}`;
  }
  const attribute = (
    wrapped || issue.path.length === 0 ? [wrapper, ...issue.path.map(String)] : issue.path.map(String)
  ).join('.');
  return { message: `${label}: ${issue.message}`, attribute };
}

function humanize(key: string): string {
  const words = key.replace(/_/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
