/**
 * Zod building blocks for the values real clients send: ids and
 * card expiry as numbers or strings, money in cents as a number or a string, booleans as JSON
 * booleans or the spec's `"true"`/`"false"` strings. Each one either yields the engine's type or
 * reports one issue whose message completes "<Label>: ..." in the service's style.
 *
 * Semantic checks with published messages (blank names, card number validity, amount ranges)
 * stay in the engine; these only settle the JSON type, so a message never depends on which
 * layer caught a problem.
 */
import { z } from 'zod';

/** Builds a schema from a parser that returns undefined for a value it refuses. */
function wireScalar<T>(parse: (value: unknown) => T | undefined, message: string) {
  return z.unknown().transform((value, ctx): T => {
    const parsed = parse(value);
    if (parsed === undefined) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return parsed;
  });
}

const DIGITS = /^\d+$/;
const SIGNED_DIGITS = /^-?\d+$/;

/** Text: a string as sent, or a finite number written as a string (a zip or reference sent as a number). */
export const wireText = wireScalar<string>(
  (v) => (typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined),
  'must be a string.',
);

/** A record id: a positive safe integer as a JSON number or a string of digits (`106` or `"106"`). */
export const wireId = wireScalar<number>((v) => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && DIGITS.test(v.trim()) ? Number(v.trim()) : Number.NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}, 'must be a positive whole number.');

/** A whole number (an interval, a count) as a JSON number or a string such as `"1"`. */
export const wireInteger = wireScalar<number>((v) => {
  const n =
    typeof v === 'number' ? v : typeof v === 'string' && SIGNED_DIGITS.test(v.trim()) ? Number(v.trim()) : Number.NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}, 'must be a whole number.');

/**
 * An amount in minor units (`price_in_cents`): a number or a string, passed on unchanged so that
 * the engine's money parser gives the one published message for a bad value ("is not a number.").
 */
export const wireCents = wireScalar<number | string>(
  (v) => (typeof v === 'number' || typeof v === 'string' ? v : undefined),
  'is not a number.',
);

const TRUE_WORDS = new Set(['true', '1']);
const FALSE_WORDS = new Set(['false', '0']);

/**
 * A boolean: `true`/`false`, the strings `"true"`/`"false"` (the spec's boolean-like fields) or
 * the flags `1`/`0` and `"1"`/`"0"` (`cancel_at_end_of_period`), case- and space-insensitive.
 */
export const wireBoolean = wireScalar<boolean>((v) => {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === 0) return v === 1;
  if (typeof v !== 'string') return undefined;
  const word = v.trim().toLowerCase();
  return TRUE_WORDS.has(word) ? true : FALSE_WORDS.has(word) ? false : undefined;
}, 'must be true or false.');

/**
 * A full card number: a string, or a number small enough to be exact (a JSON number past 2^53 has
 * already lost digits, so it is refused rather than charged as a different card).
 */
export const wireCardNumber = wireScalar<string>(
  (v) =>
    typeof v === 'string' ? v : typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? String(v) : undefined,
  'must be a string of digits.',
);

/** A card expiration month or year, a number or a string as clients send it; the engine checks the range. */
export const wireCardExpiry = wireScalar<number | string>(
  (v) => (typeof v === 'number' || typeof v === 'string' ? v : undefined),
  'must be a number or a string.',
);

/** A timestamp or date input (`next_billing_at`): a string; the engine parses it in the site's zone. */
export const wireTimestampInput = wireScalar<string>(
  (v) => (typeof v === 'string' ? v : undefined),
  'must be an ISO 8601 timestamp or a date.',
);

/** An interval unit: `month` or `day`, also the plural spellings some clients send, normalised to singular. */
export const wireIntervalUnit = wireScalar<'month' | 'day'>((v) => {
  if (typeof v !== 'string') return undefined;
  const unit = v.trim().toLowerCase();
  return unit === 'month' || unit === 'months' ? 'month' : unit === 'day' || unit === 'days' ? 'day' : undefined;
}, "must be 'month' or 'day'.");

/**
 * A decimal amount in major units (`amount`, `percentage`, `unit_price`): a number or a string,
 * passed on unchanged so that the engine's decimal parser gives the one published message for a bad
 * value ("Amount: is not a number.") and a string keeps every digit a float would lose.
 */
export const wireDecimal = wireScalar<number | string>(
  (v) => (typeof v === 'number' || typeof v === 'string' ? v : undefined),
  'is not a number.',
);

/**
 * A record named by id or handle (`product_family_id`): a positive whole number, a string of
 * digits (read as that id), or any other non-blank string, read as a handle.
 */
export const wireIdOrHandle = wireScalar<number | string>((v) => {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v > 0 ? v : undefined;
  if (typeof v !== 'string' || v.trim() === '') return undefined;
  const text = v.trim();
  if (!DIGITS.test(text)) return text;
  const n = Number(text);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}, 'must be an id or a handle.');

/**
 * A calendar-billing day (`snap_day`): a number or a string of digits, or `end`. The range (1-28)
 * is the engine's to check, so that its message is the only one a client sees for it.
 */
export const wireSnapDay = wireScalar<number | 'end'>((v) => {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const text = v.trim().toLowerCase();
  if (text === 'end') return 'end';
  return DIGITS.test(text) ? Number(text) : undefined;
}, "must be a number between 1 and 28 or 'end'.");
