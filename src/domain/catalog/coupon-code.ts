/**
 * Coupon codes: stored upper case, made of letters, digits, `_` and the characters
 * `% @ + - .` the modern service added so that e-mail addresses can be codes. Lookups normalise the
 * same way, so `save10` finds `SAVE10`.
 */
import { invalid } from '../../errors.js';

/** What a normalised code may contain. */
export const COUPON_CODE_PATTERN = /^[A-Z0-9_%@+.-]+$/;

/** The longest code the service accepts. */
export const COUPON_CODE_MAX_LENGTH = 255;

/**
 * The form a code is stored and looked up in: surrounding whitespace removed, upper case. It does
 * not check the characters; a code that fails {@link parseCouponCode} simply finds nothing.
 */
export function normaliseCouponCode(code: string): string {
  return code.trim().toUpperCase();
}

/**
 * Normalises and checks a code sent by a client. Throws "Code: cannot be blank.", "Code: is too long
 * (maximum is 255 characters)." or "Code: may contain only letters, numbers and the characters
 * _ % @ + - ." (on attribute `code` unless told otherwise).
 */
export function parseCouponCode(input: unknown, options: { field?: string; attribute?: string } = {}): string {
  const { field = 'Code', attribute = 'code' } = options;
  if (typeof input !== 'string' || input.trim() === '') throw invalid(`${field}: cannot be blank.`, attribute);
  const code = normaliseCouponCode(input);
  if (code.length > COUPON_CODE_MAX_LENGTH) {
    throw invalid(`${field}: is too long (maximum is ${COUPON_CODE_MAX_LENGTH} characters).`, attribute);
  }
  if (!COUPON_CODE_PATTERN.test(code)) {
    throw invalid(`${field}: may contain only letters, numbers and the characters _ % @ + - .`, attribute);
  }
  return code;
}
