import {
  BillingError,
  type ComponentPricePointRecord,
  type PricePointsRepository,
  type ProductPricePointRecord,
  type ProductTerms,
} from 'billing-engine';
import { keyOf, type MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';
import { highestVersion } from './catalog.js';
import { highestComponentVersion, insertComponentVersion } from './components.js';

function handleTaken(handle: string): BillingError {
  return new BillingError('conflict', `Price point handle ${handle} is already taken.`, { data: { handle } });
}

/** Price points over the memory tables (`state.pricePointTables`); their terms are product versions. */
export function memoryPricePoints(state: MemoryState, journal: Journal): PricePointsRepository {
  const tables = state.pricePointTables;
  const table = tables.productPricePoints;
  const find = (siteId: number, id: number): ProductPricePointRecord | undefined => {
    const row = table.get(id);
    return row?.siteId === siteId ? row : undefined;
  };
  const handleTakenOn = (siteId: number, productId: number, handle: string, except?: number) =>
    table.countIndexed(
      tables.productPricePointsByProduct,
      keyOf(siteId, productId),
      (p) => p.handle === handle && p.id !== except,
    ) > 0;
  const versionOf = (siteId: number, productId: number, version: number) => {
    const row = state.productVersions.find(
      (v) => v.siteId === siteId && v.productId === productId && v.version === version,
    );
    if (row === undefined) throw new BillingError('storage', `Product ${productId} has no version ${version}.`);
    const { id: _id, ...record } = row;
    return record;
  };
  const components = tables.componentPricePoints;
  const findComponentPricePoint = (siteId: number, id: number): ComponentPricePointRecord | undefined => {
    const row = components.get(id);
    return row?.siteId === siteId ? row : undefined;
  };
  const componentHandleTaken = (siteId: number, componentId: number, handle: string, except?: number) =>
    components.countIndexed(
      tables.componentPricePointsByComponent,
      keyOf(siteId, componentId),
      (p) => p.handle === handle && p.id !== except,
    ) > 0;
  /** Inserts a price point of either kind with its first terms as a new product version (not made current). */
  const insertWithVersion = (pricePoint: Omit<ProductPricePointRecord, 'id' | 'version'>, terms: ProductTerms) => {
    const product = state.products.get(pricePoint.productId);
    if (product === undefined || product.siteId !== pricePoint.siteId)
      throw new BillingError('not_found', `Product ${pricePoint.productId} not found.`);
    if (handleTakenOn(pricePoint.siteId, pricePoint.productId, pricePoint.handle)) throw handleTaken(pricePoint.handle);
    const number = highestVersion(state, pricePoint.siteId, pricePoint.productId) + 1;
    const stored = table.insert(journal, { ...pricePoint, id: table.nextId(), version: number });
    const version = {
      siteId: stored.siteId,
      productId: stored.productId,
      version: number,
      terms,
      createdAt: pricePoint.createdAt,
      pricePointId: stored.id,
    };
    state.productVersions.insert(journal, { ...version, id: state.productVersions.nextId() });
    return { pricePoint: structuredClone(stored), version: structuredClone(version) };
  };
  const componentVersionOf = (siteId: number, componentId: number, version: number) => {
    const row = state.componentVersions.find(
      (v) => v.siteId === siteId && v.componentId === componentId && v.version === version,
    );
    if (row === undefined) throw new BillingError('storage', `Component ${componentId} has no version ${version}.`);
    const { id: _id, ...record } = row;
    return record;
  };
  return {
    async insertComponentPricePoint(pricePoint, pricing) {
      const component = state.components.get(pricePoint.componentId);
      if (component === undefined || component.siteId !== pricePoint.siteId)
        throw new BillingError('not_found', `Component ${pricePoint.componentId} not found.`);
      if (componentHandleTaken(pricePoint.siteId, pricePoint.componentId, pricePoint.handle))
        throw handleTaken(pricePoint.handle);
      const number = highestComponentVersion(state, pricePoint.siteId, pricePoint.componentId) + 1;
      const stored = components.insert(journal, {
        ...pricePoint,
        id: components.nextId(),
        type: 'catalog',
        version: number,
      });
      const version = insertComponentVersion(
        state,
        journal,
        {
          siteId: stored.siteId,
          componentId: stored.componentId,
          version: number,
          pricing,
          createdAt: pricePoint.createdAt,
        },
        stored.id,
      );
      return { pricePoint: structuredClone(stored), version };
    },

    async reviseComponentPricePoint(siteId, id, patch, pricing, now) {
      const current = findComponentPricePoint(siteId, id);
      if (current === undefined) return undefined;
      if (patch.handle !== undefined && componentHandleTaken(siteId, current.componentId, patch.handle, id))
        throw handleTaken(patch.handle);
      if (pricing === undefined) {
        const pricePoint = components.replace(journal, { ...current, ...patch, updatedAt: now })!;
        return { pricePoint, version: componentVersionOf(siteId, current.componentId, current.version) };
      }
      const number = highestComponentVersion(state, siteId, current.componentId) + 1;
      const version = insertComponentVersion(
        state,
        journal,
        { siteId, componentId: current.componentId, version: number, pricing, createdAt: now },
        id,
      );
      const pricePoint = components.replace(journal, { ...current, ...patch, version: number, updatedAt: now })!;
      if (pricePoint.type === 'default') {
        const component = state.components.get(current.componentId)!;
        state.components.replace(journal, { ...component, currentVersion: number, updatedAt: now });
      }
      return { pricePoint, version };
    },

    async setComponentPricePointArchived(siteId, id, archivedAt, now) {
      const current = findComponentPricePoint(siteId, id);
      if (current === undefined) return undefined;
      return components.replace(journal, { ...current, archivedAt, updatedAt: now });
    },

    async makeDefaultComponentPricePoint(siteId, id, now) {
      const current = findComponentPricePoint(siteId, id);
      if (current === undefined) return undefined;
      const component = state.components.get(current.componentId);
      if (component === undefined || component.siteId !== siteId) return undefined;
      for (const other of components.filterIndexed(
        tables.componentPricePointsByComponent,
        keyOf(siteId, current.componentId),
        (p) => p.type === 'default' && p.id !== id,
      )) {
        components.replace(journal, { ...other, type: 'catalog', updatedAt: now });
      }
      const pricePoint = components.replace(journal, { ...current, type: 'default', updatedAt: now })!;
      const updated = state.components.replace(journal, {
        ...component,
        currentVersion: current.version,
        updatedAt: now,
      })!;
      return { pricePoint, component: updated };
    },

    async findComponentPricePoint(siteId, id) {
      return findComponentPricePoint(siteId, id);
    },

    async findComponentPricePointByHandle(siteId, componentId, handle) {
      return components.findIndexed(
        tables.componentPricePointsByComponent,
        keyOf(siteId, componentId),
        (p) => p.handle === handle,
      );
    },

    async findDefaultComponentPricePoint(siteId, componentId) {
      return components.findIndexed(
        tables.componentPricePointsByComponent,
        keyOf(siteId, componentId),
        (p) => p.type === 'default',
      );
    },

    async findComponentVersionPricePoint(siteId, componentId, version) {
      const mark = tables.componentVersionPricePoints.findIndexed(
        tables.componentVersionPricePointsByVersion,
        keyOf(siteId, componentId, version),
        () => true,
      );
      return mark === undefined ? undefined : findComponentPricePoint(siteId, mark.pricePointId);
    },

    async listComponentPricePoints(siteId, options = {}) {
      const keep = (p: ComponentPricePointRecord) =>
        p.siteId === siteId &&
        (options.onlyArchived === true
          ? p.archivedAt !== null
          : options.includeArchived === true || p.archivedAt === null);
      return options.componentId === undefined
        ? components.filter(keep)
        : components.filterIndexed(tables.componentPricePointsByComponent, keyOf(siteId, options.componentId), keep);
    },

    async insertProductPricePoint(pricePoint, terms) {
      return insertWithVersion({ ...pricePoint, type: 'catalog' }, terms);
    },

    async insertCustomProductPricePoint(pricePoint, terms) {
      const { subscriptionId, ...rest } = pricePoint;
      // Stored without the field until it has a subscription, like every other price point.
      return insertWithVersion(
        { ...rest, type: 'custom', ...(subscriptionId == null ? {} : { subscriptionId }) },
        terms,
      );
    },

    async setProductPricePointSubscription(siteId, id, subscriptionId, now) {
      const current = find(siteId, id);
      if (current === undefined) return undefined;
      return table.replace(journal, { ...current, subscriptionId, updatedAt: now });
    },

    async reviseProductPricePoint(siteId, id, patch, terms, now) {
      const current = find(siteId, id);
      if (current === undefined) return undefined;
      if (patch.handle !== undefined && handleTakenOn(siteId, current.productId, patch.handle, id))
        throw handleTaken(patch.handle);
      if (terms === undefined) {
        const pricePoint = table.replace(journal, { ...current, ...patch, updatedAt: now })!;
        return { pricePoint, version: versionOf(siteId, current.productId, current.version) };
      }
      const number = highestVersion(state, siteId, current.productId) + 1;
      const version = {
        siteId,
        productId: current.productId,
        version: number,
        terms,
        createdAt: now,
        pricePointId: id,
      };
      state.productVersions.insert(journal, { ...version, id: state.productVersions.nextId() });
      const pricePoint = table.replace(journal, { ...current, ...patch, version: number, updatedAt: now })!;
      if (pricePoint.type === 'default') {
        const product = state.products.get(current.productId)!;
        state.products.replace(journal, { ...product, currentVersion: number, updatedAt: now });
      }
      return { pricePoint, version: structuredClone(version) };
    },

    async setProductPricePointArchived(siteId, id, archivedAt, now) {
      const current = find(siteId, id);
      if (current === undefined) return undefined;
      return table.replace(journal, { ...current, archivedAt, updatedAt: now });
    },

    async makeDefaultProductPricePoint(siteId, id, now) {
      const current = find(siteId, id);
      if (current === undefined) return undefined;
      const product = state.products.get(current.productId);
      if (product === undefined || product.siteId !== siteId) return undefined;
      for (const other of table.filterIndexed(
        tables.productPricePointsByProduct,
        keyOf(siteId, current.productId),
        (p) => p.type === 'default' && p.id !== id,
      )) {
        table.replace(journal, { ...other, type: 'catalog', updatedAt: now });
      }
      const pricePoint = table.replace(journal, { ...current, type: 'default', updatedAt: now })!;
      const updated = state.products.replace(journal, { ...product, currentVersion: current.version, updatedAt: now })!;
      return { pricePoint, product: updated };
    },

    async findProductPricePoint(siteId, id) {
      return find(siteId, id);
    },

    async findProductPricePointByHandle(siteId, productId, handle) {
      return table.findIndexed(
        tables.productPricePointsByProduct,
        keyOf(siteId, productId),
        (p) => p.handle === handle,
      );
    },

    async findDefaultProductPricePoint(siteId, productId) {
      return table.findIndexed(
        tables.productPricePointsByProduct,
        keyOf(siteId, productId),
        (p) => p.type === 'default',
      );
    },

    async listProductPricePoints(siteId, options = {}) {
      const keep = (p: ProductPricePointRecord) =>
        p.siteId === siteId &&
        (options.onlyArchived === true
          ? p.archivedAt !== null
          : options.includeArchived === true || p.archivedAt === null);
      return options.productId === undefined
        ? table.filter(keep)
        : table.filterIndexed(tables.productPricePointsByProduct, keyOf(siteId, options.productId), keep);
    },
  };
}
