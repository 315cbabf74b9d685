import { randomBytes } from 'node:crypto';
import { drawBytes, type RandomSource } from './random-source.js';

/**
 * A newly issued API key. `key` is shown to the user exactly once and only its hash is stored;
 * `prefix` (`bk_` plus 8 hex characters) is stored in the clear so lists can show which key is which
 * and so authentication can find the candidate row before comparing hashes.
 */
export interface ApiKey {
  readonly key: string;
  readonly prefix: string;
}

const PREFIX_BYTES = 4;
// 24 bytes = 192 bits of secret entropy, 48 hex characters; hex (not base64url) so the body can
// never contain the `_` separator and the key is a single "word" for double-click selection.
const BODY_BYTES = 24;
const API_KEY_PATTERN = /^(bk_[0-9a-f]{8})_[0-9a-f]{48}$/;

/**
 * Issues an API key of the form `bk_<8 hex>_<48 hex>`. The visible prefix is random too (not a
 * counter), so it reveals nothing about how many keys exist; it is only 32 bits, so it is a lookup
 * hint, not an identifier: callers look rows up by prefix and then `verifySecret` the full key.
 * `random` is injectable for deterministic tests.
 */
export function generateApiKey(random: RandomSource = randomBytes): ApiKey {
  const bytes = drawBytes(random, PREFIX_BYTES + BODY_BYTES);
  const prefix = `bk_${bytes.subarray(0, PREFIX_BYTES).toString('hex')}`;
  return { key: `${prefix}_${bytes.subarray(PREFIX_BYTES).toString('hex')}`, prefix };
}

/**
 * The list prefix of a presented API key, or undefined when the text is not shaped like one of our
 * keys. Lets authentication reject garbage before touching storage and find candidates by prefix.
 */
export function apiKeyPrefix(key: string): string | undefined {
  return API_KEY_PATTERN.exec(key)?.[1];
}
