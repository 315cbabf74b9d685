import { hash, timingSafeEqual } from 'node:crypto';

/**
 * The API key of an `Authorization: Basic ...` header: the user part of `base64(user:password)`.
 * The password is ignored, as the hosted service ignores it (the SDK sends `X`, the old client
 * `x`). Undefined when the header is missing, not Basic, or carries no user.
 */
export function apiKeyFromAuthorization(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon === -1 ? decoded : decoded.slice(0, colon);
  return user === '' ? undefined : user;
}

/** Options of {@link createVerifiedKeyCache}. */
export interface VerifiedKeyCacheOptions {
  /** How long a verified key is trusted without asking the engine again, in ms. */
  readonly ttlMs: number;
  /** At most how many sites are remembered (least recently used go first). Default 1000. */
  readonly maxSites?: number;
  /** Milliseconds from any fixed origin; injectable so tests need not sleep. Default `performance.now`. */
  readonly now?: () => number;
}

/**
 * API keys the engine verified recently, so that a client's run of requests costs one key check
 * per `ttlMs` rather than one storage transaction each. What it holds, per subdomain: the SHA-256
 * of each key that authenticated, when that was, and what the engine answered (the site). A
 * lookup hashes the presented key once and compares it with every remembered hash of the
 * subdomain in constant time (no early exit, no map keyed by the secret), so timing tells nothing
 * about which key or how much of it matched. Only successes are remembered: a wrong key always
 * reaches the engine (and the failed-authentication limits).
 *
 * The price is staleness bounded by `ttlMs`: a key revoked (or a site deleted or changed) is
 * still honoured, with the site as it was, for at most that long after it was last verified.
 */
export interface VerifiedKeyCache<T> {
  /** What the engine answered for this key within the last `ttlMs`, or undefined. */
  get(subdomain: string, apiKey: string): T | undefined;
  /** Remembers that the engine verified `apiKey` for `subdomain` with answer `value`. */
  set(subdomain: string, apiKey: string, value: T): void;
}

/** Creates a {@link VerifiedKeyCache}. */
export function createVerifiedKeyCache<T>(options: VerifiedKeyCacheOptions): VerifiedKeyCache<T> {
  const ttlMs = options.ttlMs;
  const maxSites = Math.max(1, options.maxSites ?? 1000);
  const now = options.now ?? (() => performance.now());
  // A site has a handful of active keys; past this many, older entries give way.
  const maxKeysPerSite = 8;
  const sites = new Map<string, { hash: Buffer; at: number; value: T }[]>();
  // One-shot hashing: no Hash object per request.
  const digest = (apiKey: string) => hash('sha256', apiKey, 'buffer');
  return {
    get(subdomain, apiKey) {
      const entries = sites.get(subdomain);
      if (entries === undefined) return undefined;
      const presented = digest(apiKey);
      const t = now();
      let found: T | undefined;
      // Every entry is compared, fresh or not, matched or not: the work does not depend on the key.
      for (const entry of entries) {
        const equal = timingSafeEqual(presented, entry.hash);
        if (equal && t - entry.at < ttlMs && found === undefined) found = entry.value;
      }
      const fresh = entries.filter((entry) => t - entry.at < ttlMs);
      sites.delete(subdomain);
      if (fresh.length > 0) sites.set(subdomain, fresh);
      return found;
    },
    set(subdomain, apiKey, value) {
      const hash = digest(apiKey);
      const entries = (sites.get(subdomain) ?? []).filter((entry) => !timingSafeEqual(entry.hash, hash));
      entries.push({ hash, at: now(), value });
      while (entries.length > maxKeysPerSite) entries.shift();
      sites.delete(subdomain);
      sites.set(subdomain, entries);
      while (sites.size > maxSites) {
        const oldest = sites.keys().next();
        if (oldest.done === true) break;
        sites.delete(oldest.value);
      }
    },
  };
}
