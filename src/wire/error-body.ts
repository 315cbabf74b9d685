import type { BillingError } from '../errors.js';

/**
 * An error body in one of the shapes the service uses: a list of messages (the
 * common case), a bare string, a singular `error` key, a map of attribute to messages, or a list of
 * objects (allocation errors).
 */
export type ErrorJson =
  | { readonly errors: readonly string[] }
  | { readonly errors: string }
  | { readonly error: string }
  | { readonly errors: Readonly<Record<string, readonly string[]>> }
  | { readonly errors: readonly Readonly<Record<string, string | number>>[] };

/**
 * What an HTTP binding sends for an error: the status and either a JSON body or, for 401, the
 * service's plain-text body.
 */
export type WireErrorBody =
  | { readonly status: number; readonly kind: 'json'; readonly json: ErrorJson }
  | { readonly status: number; readonly kind: 'text'; readonly text: string };

/** The service's 401 body, byte for byte (27 bytes with the newline). */
export const ACCESS_DENIED_TEXT = 'HTTP Basic: Access denied.\n';

/** The only message a 5xx shows: internal details (driver errors, stack) stay in the log. */
export const INTERNAL_ERROR_MESSAGE = 'Internal error';

/** A `{"errors":[...]}` body with a status, for errors that are not BillingErrors (400, 404, 413, 429). */
export function errorListBody(status: number, messages: readonly string[]): WireErrorBody {
  return { status, kind: 'json', json: { errors: [...messages] } };
}

/**
 * The body of a BillingError: its status from the engine's one table, shaped by `error.shape`.
 * A 401 is always the plain-text access-denied body, and a 5xx never shows its message.
 */
export function serializeError(error: BillingError): WireErrorBody {
  const status = error.httpStatus;
  if (status === 401) return { status, kind: 'text', text: ACCESS_DENIED_TEXT };
  if (status >= 500) return errorListBody(status, [INTERNAL_ERROR_MESSAGE]);
  const messages = error.messages;
  switch (error.shape) {
    case 'string':
      return { status, kind: 'json', json: { errors: messages.join(' ') } };
    case 'single':
      return { status, kind: 'json', json: { error: messages.join(' ') } };
    case 'map': {
      const map: Record<string, string[]> = {};
      for (const detail of error.details) {
        const key = detail.attribute ?? 'base';
        map[key] = [...(map[key] ?? []), detail.message];
      }
      return { status, kind: 'json', json: { errors: map } };
    }
    case 'objects':
      return { status, kind: 'json', json: { errors: error.details.map((d) => ({ ...d.extra, message: d.message })) } };
    case 'plain':
      return { status, kind: 'text', text: `${error.message}\n` };
    default:
      return errorListBody(status, messages);
  }
}
