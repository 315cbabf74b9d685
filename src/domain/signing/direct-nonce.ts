import { randomBytes } from 'node:crypto';
import { invalid } from '../../errors.js';
import { drawBytes, type RandomSource } from './random-source.js';

/** The longest nonce the direct-post interface accepts, in characters. */
export const DIRECT_NONCE_MAX_LENGTH = 40;

/**
 * A nonce for a direct-post request or for the server to fill in when a signup omitted one: 20 random
 * bytes as 40 lowercase hex characters, i.e. exactly the maximum length and 160 bits, so collisions
 * within one (api_id, timestamp) are not a practical concern. `random` is injectable for tests.
 */
export function generateNonce(random: RandomSource = randomBytes): string {
  return drawBytes(random, DIRECT_NONCE_MAX_LENGTH / 2).toString('hex');
}

/**
 * Throws a validation error when `nonce` is longer than 40 characters. Characters are counted as
 * code points, the way the service's Ruby validation counts them, not as UTF-16 units, so an emoji
 * counts once.
 */
export function assertNonce(nonce: string): void {
  if ([...nonce].length > DIRECT_NONCE_MAX_LENGTH) {
    throw invalid(`Nonce: is too long (maximum is ${DIRECT_NONCE_MAX_LENGTH} characters).`, 'nonce');
  }
}
