import { BillingError } from '../errors.js';
import type { SiteRecord, StorageTransaction } from '../ports/storage.js';

/** Loads a site by subdomain inside a transaction; `not_found` when there is none. */
export async function loadSite(tx: StorageTransaction, subdomain: string): Promise<SiteRecord> {
  const site = typeof subdomain === 'string' ? await tx.sites.findBySubdomain(subdomain.toLowerCase()) : undefined;
  if (site === undefined)
    throw new BillingError('not_found', `Site '${String(subdomain)}' not found.`, { data: { what: 'site' } });
  return site;
}
