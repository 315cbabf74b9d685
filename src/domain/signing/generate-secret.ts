import { randomBytes } from 'node:crypto';
import { BillingError } from '../../errors.js';
import { drawBytes, type RandomSource } from './random-source.js';

/** How {@link generateSecret} spells its bytes: URL-safe base64 without padding, or lowercase hex. */
export type SecretEncoding = 'base64url' | 'hex';

/**
 * A fresh random secret of `bytes` bytes (default 32, i.e. 256 bits) as URL-safe base64 (default) or
 * lowercase hex text, usable for shared keys, `api_secret`, `api_password` and similar. Both
 * encodings survive URLs, headers and form fields without escaping. `random` is injectable so tests
 * get fixed output; it defaults to `node:crypto`'s `randomBytes`.
 */
export function generateSecret(
  bytes = 32,
  random: RandomSource = randomBytes,
  encoding: SecretEncoding = 'base64url',
): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > 1024) {
    throw new BillingError('internal', `Secret size must be an integer from 1 to 1024 bytes, got ${bytes}.`);
  }
  return drawBytes(random, bytes).toString(encoding);
}
