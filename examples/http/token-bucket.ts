/** Options of {@link createTokenBucket}. */
export interface TokenBucketOptions {
  /** Most requests a caller may make in a burst. */
  readonly capacity: number;
  /** Tokens regained per second, i.e. the sustained request rate. */
  readonly refillPerSecond: number;
  /** Milliseconds from any fixed origin; injectable so tests need not sleep. Default `performance.now`. */
  readonly now?: () => number;
}

/** The verdict on one request: allowed, or refused with the seconds until a token is back. */
export type TokenBucketDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

/** A set of token buckets, one per caller key. */
export interface TokenBucket {
  /** Takes one token from `key`'s bucket if it has one. */
  take(key: string): TokenBucketDecision;
}

/**
 * Token-bucket rate limiting per key: each key starts full at `capacity`, regains `refillPerSecond`
 * tokens per second up to `capacity`, and each request takes one. Buckets that have refilled
 * completely are forgotten, so memory holds only callers active within the last refill time.
 */
export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  const { capacity, refillPerSecond } = options;
  if (!Number.isFinite(capacity) || capacity < 1) throw new RangeError('rate limit capacity must be at least 1');
  if (!Number.isFinite(refillPerSecond) || refillPerSecond <= 0)
    throw new RangeError('rate limit refillPerSecond must be positive');
  const now = options.now ?? (() => performance.now());
  const buckets = new Map<string, { tokens: number; at: number }>();
  const fullAfterMs = (capacity / refillPerSecond) * 1000;
  let lastSweep = now();

  return {
    take(key) {
      const t = now();
      if (t - lastSweep > fullAfterMs) {
        for (const [k, b] of buckets) if (t - b.at >= fullAfterMs) buckets.delete(k);
        lastSweep = t;
      }
      const bucket = buckets.get(key) ?? { tokens: capacity, at: t };
      // A clock that steps back must not mint tokens or stall a bucket forever.
      const elapsed = Math.max(0, t - bucket.at);
      const tokens = Math.min(capacity, bucket.tokens + (elapsed / 1000) * refillPerSecond);
      if (tokens >= 1) {
        buckets.set(key, { tokens: tokens - 1, at: t });
        return { allowed: true };
      }
      buckets.set(key, { tokens, at: t });
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / refillPerSecond)) };
    },
  };
}
