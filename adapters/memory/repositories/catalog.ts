import { BillingError, type CatalogRepository } from 'billing-engine';
import { keyOf, type MemoryState } from '../memory-state.js';
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
      // The default price point, with the name and handle the service gives it.
      const tables = state.pricePointTables;
      const pricePoint = tables.productPricePoints.insert(journal, {
        id: tables.productPricePoints.nextId(),
        siteId: stored.siteId,
        productId: stored.id,
        name: 'Original',
        handle: 'original',
        type: 'default',
        version: 1,
        archivedAt: null,
        createdAt: product.createdAt,
        updatedAt: product.createdAt,
      });
      const version = {
        siteId: stored.siteId,
        productId: stored.id,
        version: 1,
        terms,
        createdAt: product.createdAt,
        pricePointId: pricePoint.id,
      };
      state.productVersions.insert(journal, { ...version, id: state.productVersions.nextId() });
      return { product: stored, version: structuredClone(version) };
    },
    async addProductVersion(siteId, productId, expectedCurrent, terms, now) {
      const product = state.products.get(productId);
      if (product === undefined || product.siteId !== siteId || product.currentVersion !== expectedCurrent)
        return undefined;
      const tables = state.pricePointTables;
      const pricePoint = tables.productPricePoints.findIndexed(
        tables.productPricePointsByProduct,
        keyOf(siteId, productId),
        (p) => p.type === 'default',
      );
      if (pricePoint === undefined)
        throw new BillingError('storage', `Product ${productId} has no default price point.`);
      const number = highestVersion(state, siteId, productId) + 1;
      const version = { siteId, productId, version: number, terms, createdAt: now, pricePointId: pricePoint.id };
      state.productVersions.insert(journal, { ...version, id: state.productVersions.nextId() });
      tables.productPricePoints.replace(journal, { ...pricePoint, version: number, updatedAt: now });
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

/** The product's highest version number (0 when it has none). */
export function highestVersion(state: MemoryState, siteId: number, productId: number): number {
  let highest = 0;
  for (const v of state.productVersions.scan()) {
    if (v.siteId === siteId && v.productId === productId && v.version > highest) highest = v.version;
  }
  return highest;
}
