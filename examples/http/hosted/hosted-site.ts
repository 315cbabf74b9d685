import { type BillingEngine, BillingError, type SiteHandle, type SiteRecord } from 'billing-engine';
import { siteFromHost } from '../site-from-host.js';

/** The site a hosted page addresses, with its record (the shared key is needed to check tokens). */
export interface HostedSite {
  readonly handle: SiteHandle;
  readonly record: SiteRecord;
}

/**
 * The site of a hosted-page request: the first label of `Host`, as for the main API, but without
 * any API key (the token or signed link in the path authenticates). Undefined for a missing host or
 * an unknown site, which the pages answer with the same 404 as a wrong token, so that a page never
 * reveals which sites exist.
 */
export async function hostedSite(engine: BillingEngine, host: string | undefined): Promise<HostedSite | undefined> {
  const subdomain = siteFromHost(host);
  if (subdomain === undefined) return undefined;
  const handle = engine.site(subdomain);
  try {
    return { handle, record: await handle.info() };
  } catch (error) {
    if (error instanceof BillingError && error.code === 'not_found') return undefined;
    throw error;
  }
}

/** True for an engine error a page shows to the customer (bad input, refused change, decline); false for faults. */
export function isCustomerFacing(error: unknown): error is BillingError {
  return error instanceof BillingError && error.httpStatus < 500 && error.code !== 'not_found';
}

/** True for the engine's `not_found`: the page answers 404 as for a bad token. */
export function isNotFound(error: unknown): boolean {
  return error instanceof BillingError && error.code === 'not_found';
}
