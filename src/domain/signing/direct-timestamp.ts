import { invalid } from '../../errors.js';

/**
 * Parses a posted `secure[timestamp]`: integer seconds since 1970-01-01 UTC, digits only. Fractions,
 * signs, exponents, whitespace and values beyond the safe-integer range are rejected with a
 * validation error instead of being truncated or rounded: the service documents "no fractions", and a
 * lenient parse would record (and reflect back) a timestamp the client never sent.
 */
export function parseDirectTimestamp(text: string): number {
  if (/^[0-9]+$/.test(text)) {
    const seconds = Number(text);
    if (Number.isSafeInteger(seconds)) return seconds;
  }
  throw invalid('Timestamp: must be a whole number of seconds since 1970-01-01 00:00:00 UTC.', 'timestamp');
}
