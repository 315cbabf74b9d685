import type { Context } from 'hono';
import ipaddr from 'ipaddr.js';
import { type ClientAddressOf, socketAddress } from './client-address.js';
import { createTokenBucket, type TokenBucketOptions } from './token-bucket.js';

/**
 * Limits by client address, for callers that have not proven who they are (the per-key limit
 * covers those that have). Both default on; see {@link createAddressLimits}.
 */
export interface AddressRateLimitOptions {
  /**
   * Failed authentications per address: a missing, wrong or other site's API key, an unknown site,
   * and hosted-page URLs whose token or signed link matches nothing (every hosted 404). Once an
   * address has spent them, all its requests get 429 with Retry-After, before any credential is
   * looked at, until a token is back; so guessing runs at most at `refillPerSecond`. Default
   * {@link DEFAULT_FAILURE_LIMIT}.
   */
  readonly failures?: TokenBucketOptions;
  /** Every hosted-page request per address (they carry no API key). Default {@link DEFAULT_HOSTED_PAGE_LIMIT}. */
  readonly hostedPages?: TokenBucketOptions;
  /**
   * How a request's client address is found. Default {@link socketAddress}: the peer's socket
   * address, never `X-Forwarded-For`. Behind a reverse proxy every request has the proxy's
   * address, so pass a function that reads the address the proxy sets (and that only it can set).
   */
  readonly clientAddress?: ClientAddressOf;
}

/** Failed authentications per address: 100 at once, then one a second (3,600 guesses an hour at most). */
export const DEFAULT_FAILURE_LIMIT: TokenBucketOptions = { capacity: 100, refillPerSecond: 1 };

/** Hosted-page requests per address: far more than a person clicking through the pages makes. */
export const DEFAULT_HOSTED_PAGE_LIMIT: TokenBucketOptions = { capacity: 300, refillPerSecond: 10 };

/**
 * The address limiter of one app. Each method takes the request (its address is worked out only
 * when needed) and answers undefined to let it through, or the seconds to wait.
 */
export interface AddressLimits {
  /** Seconds until the request's address may try again after spending its failures; undefined when it may now. */
  blocked(c: Context): number | undefined;
  /** Counts one failed authentication of the request's address; the seconds to wait when it was one too many. */
  failed(c: Context): number | undefined;
  /** Takes one hosted-page request of the request's address; the seconds to wait when there is none left. */
  hostedPage(c: Context): number | undefined;
}

/** The rate-limit key of an address: IPv4 as it is, IPv6 as its /64 prefix, an IPv4-mapped IPv6 as the IPv4. */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}

/**
 * Token buckets per client address: one for failed authentications, one for hosted-page requests.
 * A failure that finds the failure bucket empty blocks its address until a token is back; while
 * blocked, {@link AddressLimits.blocked} refuses the address without touching the buckets, so a
 * guesser learns nothing and costs nothing but the refusal. Blocks are kept only while they last.
 */
export function createAddressLimits(options: AddressRateLimitOptions = {}): AddressLimits {
  const failureOptions = options.failures ?? DEFAULT_FAILURE_LIMIT;
  const failures = createTokenBucket(failureOptions);
  const pages = createTokenBucket(options.hostedPages ?? DEFAULT_HOSTED_PAGE_LIMIT);
  const clientAddress = options.clientAddress ?? socketAddress;
  const now = failureOptions.now ?? (() => performance.now());
  const blockedUntil = new Map<string, number>();
  let lastSweep = now();

  const waitUntil = (until: number, t: number) => Math.max(1, Math.ceil((until - t) / 1000));

  const addressOf = (c: Context) => addressKey(clientAddress(c));

  return {
    blocked(c) {
      // Nothing is blocked on a quiet server: no address to work out on the common path.
      if (blockedUntil.size === 0) return undefined;
      const address = addressOf(c);
      const until = blockedUntil.get(address);
      if (until === undefined) return undefined;
      const t = now();
      if (t < until) return waitUntil(until, t);
      blockedUntil.delete(address);
      return undefined;
    },
    failed(c) {
      const t = now();
      if (t - lastSweep > 1000) {
        for (const [key, until] of blockedUntil) if (t >= until) blockedUntil.delete(key);
        lastSweep = t;
      }
      const address = addressOf(c);
      const decision = failures.take(address);
      if (decision.allowed) return undefined;
      blockedUntil.set(address, t + decision.retryAfterSeconds * 1000);
      return decision.retryAfterSeconds;
    },
    hostedPage(c) {
      const decision = pages.take(addressOf(c));
      return decision.allowed ? undefined : decision.retryAfterSeconds;
    },
  };
}
