import { BillingError, notFound } from '../errors.js';
import type { SiteRecord, StorageTransaction, SubscriptionRecord } from '../ports/storage.js';

/** Loads a site by subdomain inside a transaction; `not_found` when there is none. */
export async function loadSite(tx: StorageTransaction, subdomain: string): Promise<SiteRecord> {
  const site = typeof subdomain === 'string' ? await tx.sites.findBySubdomain(subdomain.toLowerCase()) : undefined;
  if (site === undefined)
    throw new BillingError('not_found', `Site '${String(subdomain)}' not found.`, { data: { what: 'site' } });
  return site;
}

/** Loads a subscription of the site inside a transaction; `not_found` when there is none. */
export async function loadSubscription(
  tx: StorageTransaction,
  siteId: number,
  id: number,
): Promise<SubscriptionRecord> {
  const subscription = await tx.subscriptions.findById(siteId, id);
  if (!subscription) throw notFound('Subscription', id);
  return subscription;
}
