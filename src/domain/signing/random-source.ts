import { BillingError } from '../../errors.js';

/**
 * Where signing helpers get random bytes. Defaults to `node:crypto`'s `randomBytes`; tests and
 * deterministic simulations pass their own, because domain code never reaches for ambient randomness.
 * It must return exactly `size` cryptographically strong bytes in production.
 */
export type RandomSource = (size: number) => Uint8Array;

/**
 * Draws `size` bytes from `random` as a Buffer, refusing a source that returns the wrong number of
 * bytes: a short read would silently shrink a secret's entropy, which is worse than failing loudly.
 */
export function drawBytes(random: RandomSource, size: number): Buffer {
  const bytes = random(size);
  if (bytes.length !== size) {
    throw new BillingError('internal', `Random source returned ${bytes.length} bytes, expected ${size}.`);
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
