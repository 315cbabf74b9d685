import { createHash } from 'node:crypto';
import { hexDigestMatches } from './constant-time-equal.js';

/** Lowercase hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The stored form of an API key or direct `api_password`: lowercase hex SHA-256. A fast, unsalted
 * hash is the right tool here, not a password KDF (bcrypt, scrypt, argon2): every secret we hash is
 * one we generated ourselves with at least 128 bits from a CSPRNG, so brute force and rainbow tables
 * are hopeless regardless of hash speed, and authenticating a request stays a microsecond operation.
 * Never use it for human-chosen passwords. The shared key and `api_secret` are not hashed at all,
 * because HMAC needs them in the clear.
 */
export function hashSecret(secret: string): string {
  return sha256Hex(secret);
}

/**
 * True when `presented` (a {@link hashSecret} of a presented secret, so 64 hex digits) is the
 * stored `hash` (either hex case), compared in constant time without hashing either side again. A malformed stored
 * hash is simply a mismatch rather than an error, so a corrupted row can never authenticate
 * anyone. A caller that checks one secret against several stored hashes (a site's active API
 * keys) hashes it once.
 */
export function secretHashMatches(presented: string, hash: string): boolean {
  return presented.length === 64 && hexDigestMatches(presented, hash);
}

/**
 * True when `secret` hashes to `hash` (as produced by {@link hashSecret}, either hex case). The
 * comparison is constant time, and a malformed stored hash is simply a mismatch rather than an error,
 * so a corrupted row can never authenticate anyone.
 */
export function verifySecret(secret: string, hash: string): boolean {
  return secretHashMatches(hashSecret(secret), hash);
}
