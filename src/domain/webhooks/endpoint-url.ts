import { invalid } from '../../errors.js';
import type { SiteMode } from '../../ports/storage.js';
import { literalAddressScope } from './ip-address.js';

/** Longest endpoint URL accepted; longer ones are almost certainly mistakes and bloat every webhook record. */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** The ports allowed for webhook endpoints. */
export const WEBHOOK_PORTS: readonly number[] = [80, 443];

/** What the URL rules depend on. */
export interface WebhookUrlRules {
  /** The site's mode: live sites need HTTPS. */
  readonly mode: SiteMode;
  /**
   * Lets a test-mode site use a loopback receiver (`127.0.0.1`, `[::1]`, `localhost`) on any port
   * and over plain HTTP, for local development and tests. Off by default; never applies to live sites.
   */
  readonly allowLocalReceivers: boolean;
}

/**
 * Top-level names that never resolve on the public internet (RFC 6761, RFC 6762, RFC 8375 and the
 * common private-network conventions), so an endpoint under them can never be "publicly reachable".
 */
const NON_PUBLIC_SUFFIXES = [
  'localhost',
  'local',
  'internal',
  'intranet',
  'lan',
  'home.arpa',
  'invalid',
  'test',
  'example',
];

/** A hostname without its trailing root dot and in lower case, as DNS compares names. */
function canonicalHost(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

/** True when `hostname` (as `URL.hostname` gives it) names this machine: 127.0.0.0/8, `[::1]` or `localhost`. */
export function isLoopbackHost(hostname: string): boolean {
  const host = canonicalHost(hostname);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return literalAddressScope(host) === 'loopback';
}

/**
 * True when `hostname` could be publicly reachable: a literal address the webhook address rule
 * calls public (`ip-address.ts`: ipaddr.js `unicast` and none of the refused ranges), or a DNS name
 * with at least two labels that is not under a reserved or private-use top-level name. A DNS name
 * is judged by its spelling only here (no I/O in the domain): this is the registration-time first
 * line. What it resolves to is judged at every send (`checkDestination`), and that is the check
 * that decides where a webhook goes.
 */
export function isPublicHost(hostname: string): boolean {
  const host = canonicalHost(hostname);
  const scope = literalAddressScope(host);
  if (scope !== undefined) return scope === 'public';
  if (!host.includes('.')) return false;
  return !NON_PUBLIC_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`));
}

/**
 * Checks a webhook endpoint URL against the endpoint rules and returns it trimmed: absolute `http`/`https`;
 * publicly reachable; port 80 or 443 only; plain HTTP only on a test site, HTTPS on a live one. A
 * loopback receiver on any port is allowed only with `allowLocalReceivers` and only in test mode.
 * The `{signature_hmac_sha_256}` template variable may appear anywhere (it is filled in per
 * delivery). Throws a validation error whose message says which rule failed (`Url: ...`).
 */
export function checkWebhookUrl(url: unknown, rules: WebhookUrlRules): string {
  if (typeof url !== 'string' || url.trim() === '') throw invalid('Url: cannot be blank.', 'url');
  const text = url.trim();
  if (text.length > WEBHOOK_URL_MAX_LENGTH) {
    throw invalid(`Url: is too long (maximum is ${WEBHOOK_URL_MAX_LENGTH} characters).`, 'url');
  }
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw invalid('Url: is not a valid URL.', 'url');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalid('Url: must start with http:// or https://.', 'url');
  }
  const live = rules.mode === 'live';
  if (live && parsed.protocol !== 'https:') throw invalid('Url: must use HTTPS for a site in live mode.', 'url');
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  if (isLoopbackHost(parsed.hostname)) {
    if (!rules.allowLocalReceivers || live) {
      throw invalid(
        live
          ? 'Url: must be publicly reachable; local receivers are never allowed for a site in live mode.'
          : 'Url: must be publicly reachable; local receivers need the allowLocalReceivers engine option.',
        'url',
      );
    }
    return text;
  }
  if (!isPublicHost(parsed.hostname)) {
    throw invalid(`Url: must be publicly reachable; '${parsed.hostname}' is a local or private address.`, 'url');
  }
  if (!WEBHOOK_PORTS.includes(port)) throw invalid(`Url: port ${port} is not allowed; use port 80 or 443.`, 'url');
  return text;
}
