import { BillingError, type SitesRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Sites over the memory tables. */
export function memorySites(state: MemoryState, journal: Journal): SitesRepository {
  return {
    async insert(site) {
      if (state.sites.count((s) => s.subdomain === site.subdomain) > 0) {
        throw new BillingError('conflict', `Subdomain '${site.subdomain}' is already taken.`, {
          data: { constraint: 'sites_subdomain' },
        });
      }
      return state.sites.insert(journal, { ...site, id: state.sites.nextId(), version: 1 });
    },
    async findById(id) {
      return state.sites.get(id);
    },
    async findBySubdomain(subdomain) {
      return state.sites.find((s) => s.subdomain === subdomain);
    },
    async list() {
      return state.sites.filter(() => true);
    },
    async updateAtVersion(id, expectedVersion, patch) {
      const current = state.sites.get(id);
      if (current === undefined || current.version !== expectedVersion) return undefined;
      return state.sites.replace(journal, { ...current, ...patch, id, version: current.version + 1 });
    },
    async delete(id) {
      if (!state.sites.delete(journal, id)) return false;
      for (const table of state.siteOwnedTables()) table.deleteWhere(journal, (row) => row.siteId === id);
      return true;
    },
  };
}
