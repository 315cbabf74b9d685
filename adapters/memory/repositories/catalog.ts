import { BillingError, type CatalogRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

function conflict(what: string): BillingError {
  return new BillingError('conflict', `${what} is already taken.`);
}

/** Product families, products and versions over the memory tables. */
export function memoryCatalog(state: MemoryState, journal: Journal): CatalogRepository {
  const versionOf = (siteId: number, productId: number, version: number) => {
    const row = state.productVersions.find(
      (v) => v.siteId === siteId && v.productId === productId && v.version === version,
    );
    if (row === undefined) return undefined;
    const { id: _id, ...record } = row;
    return record;
  };
  return {
    async insertFamily(family) {
      if (state.families.count((f) => f.siteId === family.siteId && f.handle === family.handle) > 0)
        throw conflict('Handle');
      return state.families.insert(journal, { ...family, id: state.families.nextId() });
    },
    async findFamily(siteId, id) {
      const family = state.families.get(id);
      return family?.siteId === siteId ? family : undefined;
    },
    async findFamilyByHandle(siteId, handle) {
      return state.families.find((f) => f.siteId === siteId && f.handle === handle);
    },
    async listFamilies(siteId) {
      return state.families.filter((f) => f.siteId === siteId);
    },
    async updateFamily(siteId, id, patch) {
      const family = state.families.get(id);
      if (family === undefined || family.siteId !== siteId) return undefined;
      const handle = patch.handle;
      if (
        handle !== undefined &&
        state.families.count((f) => f.siteId === siteId && f.handle === handle && f.id !== id) > 0
      ) {
        throw conflict('Handle');
      }
      return state.families.replace(journal, { ...family, ...patch });
    },
    async insertProduct(product, terms) {
      if (state.products.count((p) => p.siteId === product.siteId && p.handle === product.handle) > 0)
        throw conflict('Handle');
      const stored = state.products.insert(journal, { ...product, id: state.products.nextId(), currentVersion: 1 });
      const version = { siteId: stored.siteId, productId: stored.id, version: 1, terms, createdAt: product.createdAt };
      state.productVersions.insert(journal, { ...version, id: state.productVersions.nextId() });
      return { product: stored, version: structuredClone(version) };
    },
    async addProductVersion(siteId, productId, expectedCurrent, terms, now) {
      const product = state.products.get(productId);
      if (product === undefined || product.siteId !== siteId || product.currentVersion !== expectedCurrent)
        return undefined;
      const version = { siteId, productId, version: expectedCurrent + 1, terms, createdAt: now };
      state.productVersions.insert(journal, { ...version, id: state.productVersions.nextId() });
      const updated = state.products.replace(journal, { ...product, currentVersion: version.version, updatedAt: now })!;
      return { product: updated, version: structuredClone(version) };
    },
    async setProductArchived(siteId, productId, archivedAt, now) {
      const product = state.products.get(productId);
      if (product === undefined || product.siteId !== siteId) return undefined;
      return state.products.replace(journal, { ...product, archivedAt, updatedAt: now });
    },
    async findProduct(siteId, id) {
      const product = state.products.get(id);
      return product?.siteId === siteId ? product : undefined;
    },
    async findProductByHandle(siteId, handle) {
      return state.products.find((p) => p.siteId === siteId && p.handle === handle);
    },
    async listProducts(siteId, familyId) {
      return state.products.filter((p) => p.siteId === siteId && (familyId === undefined || p.familyId === familyId));
    },
    async findProductVersion(siteId, productId, version) {
      return versionOf(siteId, productId, version);
    },
  };
}
