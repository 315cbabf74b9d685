/**
 * Signed, expiring billing-portal links (`/portal/{customer_id}/{expires_unix}/{signature}`). The
 * service's management URL is not derivable by merchants: it is handed out by the
 * API. Ours is an HMAC the engine can check without storing anything: whoever holds the link may
 * manage that customer's subscriptions until it expires, and rotating the site's shared key
 * revokes every link at once. Pure: the instant to check against is always passed in.
 */
import { createHmac } from 'node:crypto';
import { constantTimeHexEqual, isHexOfLength } from './domain/signing/constant-time-equal.js';

/** How many hex characters of the HMAC-SHA256 make a portal link signature (128 bits). */
export const PORTAL_LINK_SIGNATURE_LENGTH = 32;

/** The default lifetime of a management link: 65 days, as the service's statement links. */
export const DEFAULT_PORTAL_LINK_LIFETIME_SECONDS = 65 * 24 * 60 * 60;

// Ids and expiry instants are decimal integers in the URL; bounding their length keeps a crafted
// segment from ever reaching Number() as something that is not a safe integer.
const DECIMAL = /^[0-9]{1,15}$/;

/**
 * The signature segment of a portal link: lowercase hex HMAC-SHA256, keyed with the site's shared
 * key, over `portal--{customerId}--{expires}`, truncated to 32 hex characters. `expires` is the
 * link's expiry in whole Unix seconds. The `portal--` prefix keeps these signatures apart from
 * every other use of the shared key (webhook bodies, hosted-page tokens).
 */
export function portalLinkSignature(customerId: number | string, expires: number | string, sharedKey: string): string {
  return createHmac('sha256', sharedKey)
    .update(`portal--${customerId}--${expires}`, 'utf8')
    .digest('hex')
    .slice(0, PORTAL_LINK_SIGNATURE_LENGTH);
}

/** Input of {@link createPortalLink}. */
export interface CreatePortalLinkInput {
  readonly customerId: number;
  readonly sharedKey: string;
  /** The instant the link is issued at. */
  readonly now: Date;
  /** How long the link works; default {@link DEFAULT_PORTAL_LINK_LIFETIME_SECONDS}. */
  readonly lifetimeSeconds?: number;
}

/** A signed portal link: its path (to append to the site's base URL), its parts and its expiry. */
export interface PortalLink {
  /** `/portal/{customerId}/{expires}/{signature}`. */
  readonly path: string;
  readonly customerId: number;
  /** Expiry in whole Unix seconds, as in the path. */
  readonly expires: number;
  readonly expiresAt: Date;
  readonly signature: string;
}

/**
 * Issues a portal link for a customer that works until `now + lifetimeSeconds` (rounded down to a
 * whole second, since the URL carries whole seconds). Throws RangeError for an id or lifetime that
 * is not a positive safe integer, so that a bad input can never produce a link that never expires.
 */
export function createPortalLink(input: CreatePortalLinkInput): PortalLink {
  const lifetime = input.lifetimeSeconds ?? DEFAULT_PORTAL_LINK_LIFETIME_SECONDS;
  if (!Number.isSafeInteger(input.customerId) || input.customerId < 1)
    throw new RangeError('customerId must be a positive integer');
  if (!Number.isSafeInteger(lifetime) || lifetime < 1)
    throw new RangeError('lifetimeSeconds must be a positive integer');
  const expires = Math.floor(input.now.getTime() / 1000) + lifetime;
  if (!Number.isSafeInteger(expires) || !DECIMAL.test(String(expires)))
    throw new RangeError('the link would expire outside the supported range');
  const signature = portalLinkSignature(input.customerId, expires, input.sharedKey);
  return {
    path: `/portal/${input.customerId}/${expires}/${signature}`,
    customerId: input.customerId,
    expires,
    expiresAt: new Date(expires * 1000),
    signature,
  };
}

/** Input of {@link verifyPortalLink} and {@link checkPortalLink}: the link's segments as received. */
export interface VerifyPortalLinkInput {
  readonly customerId: number | string;
  readonly expires: number | string;
  readonly signature: string;
  readonly sharedKey: string;
  /** The instant to check expiry against (the engine's clock in the HTTP binding). */
  readonly now: Date;
}

/** What a portal link is worth: usable, genuine but past its expiry, or not ours at all. */
export type PortalLinkStatus = 'valid' | 'expired' | 'invalid';

/**
 * Classifies a portal link. `invalid` when a segment is malformed (id or expiry not a plain
 * decimal, signature not 32 hex characters) or the signature does not match; `expired` when the
 * signature matches but `now` is at or after the expiry; otherwise `valid`. The signature is
 * compared in constant time, ignoring hex case, and before expiry is looked at, so a forged link is
 * `invalid` whatever its date. Only a genuine link can be told apart as `expired`.
 */
export function checkPortalLink(input: VerifyPortalLinkInput): PortalLinkStatus {
  const customerId = String(input.customerId);
  const expires = String(input.expires);
  if (!DECIMAL.test(customerId) || !DECIMAL.test(expires) || Number(customerId) < 1) return 'invalid';
  if (!isHexOfLength(input.signature, PORTAL_LINK_SIGNATURE_LENGTH) || typeof input.sharedKey !== 'string')
    return 'invalid';
  // Signed over the canonical decimal forms, so `007` can never stand in for `7`.
  if (String(Number(customerId)) !== customerId || String(Number(expires)) !== expires) return 'invalid';
  const expected = portalLinkSignature(Number(customerId), Number(expires), input.sharedKey);
  if (!constantTimeHexEqual(expected, input.signature)) return 'invalid';
  return input.now.getTime() < Number(expires) * 1000 ? 'valid' : 'expired';
}

/**
 * True only for a genuine, unexpired portal link (see {@link checkPortalLink}): the signature
 * matches in constant time and `now` is before the expiry. An expired link is false.
 */
export function verifyPortalLink(input: VerifyPortalLinkInput): boolean {
  return checkPortalLink(input) === 'valid';
}

/**
 * The public origin portal links are issued for, checked: an absolute `http:` or `https:` URL
 * with nothing but a scheme, a host and an optional port (a trailing `/` is dropped). Throws
 * RangeError for anything else, so that a misconfigured origin fails loudly rather than signing
 * links to somewhere else. Links are only ever made for a configured origin, never for the
 * request's `Host`, which the client writes: a link built from it would point wherever the
 * caller said, with a genuine signature.
 */
export function portalOrigin(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new RangeError(`portal origin ${JSON.stringify(origin)} is not an absolute URL`);
  }
  const bare =
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.username === '' &&
    url.password === '' &&
    url.pathname === '/' &&
    url.search === '' &&
    url.hash === '' &&
    !origin.includes('?') &&
    !origin.includes('#');
  if (!bare) throw new RangeError(`portal origin ${JSON.stringify(origin)} must be http(s)://host[:port] only`);
  return url.origin;
}

/**
 * A site's portal origin under a base domain: `https://{subdomain}.{baseDomain}`, or with the scheme
 * the base domain names (`http://localhost:3000` gives `http://acme.localhost:3000`). The base domain
 * is a host with an optional port, or such an origin; anything else throws RangeError.
 */
export function sitePortalOrigin(subdomain: string, baseDomain: string): string {
  const explicit = /^https?:\/\//i.test(baseDomain);
  const base = portalOrigin(explicit ? baseDomain : `https://${baseDomain}`);
  if (!/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i.test(subdomain))
    throw new RangeError(`subdomain ${JSON.stringify(subdomain)} cannot name a host`);
  const url = new URL(base);
  url.hostname = `${subdomain.toLowerCase()}.${url.hostname}`;
  return portalOrigin(url.origin);
}

/** The full URL of a portal link on a checked origin (see {@link portalOrigin}). */
export function portalLinkUrl(origin: string, link: Pick<PortalLink, 'path'>): string {
  return `${portalOrigin(origin)}${link.path}`;
}
