import type { SiteRecord } from '../ports/storage.js';

/**
 * A site as the service's `GET /site.json` writes it (inside `{"site":{...}}`): what a client
 * needs to know about the account it talks to. Secrets (the shared key) never appear; features
 * the engine does not have (customer hierarchies, who-pays, other currencies) are off.
 */
export interface SiteJson {
  readonly id: number;
  readonly name: string;
  readonly subdomain: string;
  readonly currency: string;
  readonly non_primary_currencies: readonly string[];
  readonly relationship_invoicing_enabled: boolean;
  readonly customer_hierarchy_enabled: boolean;
  readonly whopays_enabled: boolean;
  readonly default_payment_collection_method: string;
  readonly test: boolean;
}

/** `{"site":{...}}`, the body of `GET /site.json`. */
export function serializeSite(site: SiteRecord): { site: SiteJson } {
  return {
    site: {
      id: site.id,
      name: site.name,
      subdomain: site.subdomain,
      currency: site.currency,
      non_primary_currencies: [],
      relationship_invoicing_enabled: false,
      customer_hierarchy_enabled: false,
      whopays_enabled: false,
      default_payment_collection_method: 'automatic',
      test: site.mode === 'test',
    },
  };
}
