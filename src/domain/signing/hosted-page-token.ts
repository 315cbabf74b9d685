import { createHash } from 'node:crypto';
import { constantTimeHexEqual } from './constant-time-equal.js';

/** How many hex characters of the SHA-1 digest make a hosted page token. */
export const HOSTED_PAGE_TOKEN_LENGTH = 10;

/**
 * The token in a hosted page URL such as `/update_payment/{id}/{token}`: the first 10 lowercase hex
 * characters of the plain SHA-1 (not an HMAC) of `${shortname}--${id}--${sharedKey}`.
 * The weak construction is the service's, kept for URL compatibility with existing merchants.
 */
export function hostedPageToken(shortname: string, id: number | string, sharedKey: string): string {
  return createHash('sha1')
    .update(`${shortname}--${id}--${sharedKey}`, 'utf8')
    .digest('hex')
    .slice(0, HOSTED_PAGE_TOKEN_LENGTH);
}

/**
 * Checks the id and token segments of a hosted page URL and returns the resource id, or undefined
 * when the URL must 404. The id segment may be a pretty id (`77-john-doe`): only its leading integer
 * counts and the token is computed over that bare id; a segment that does not start with a positive
 * safe integer fails. A token longer than 10 characters is accepted but only its first 10 are
 * compared, case-insensitively and in constant time; a shorter token fails.
 */
export function verifyHostedPageToken(
  shortname: string,
  idSegment: string,
  token: string,
  sharedKey: string,
): number | undefined {
  const digits = /^[0-9]+/.exec(idSegment)?.[0];
  if (digits === undefined) return undefined;
  const id = Number(digits);
  if (!Number.isSafeInteger(id) || id < 1) return undefined;
  if (token.length < HOSTED_PAGE_TOKEN_LENGTH) return undefined;
  const expected = hostedPageToken(shortname, id, sharedKey);
  return constantTimeHexEqual(expected, token.slice(0, HOSTED_PAGE_TOKEN_LENGTH)) ? id : undefined;
}
