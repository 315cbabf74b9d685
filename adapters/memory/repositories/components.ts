import { BillingError, type ComponentPricing, type ComponentsRepository } from 'billing-engine';
import { keyOf, type MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** The highest version number of a component, of any price point (0 when it has none). */
export function highestComponentVersion(state: MemoryState, siteId: number, componentId: number): number {
  let highest = 0;
  for (const v of state.componentVersions.filter((v) => v.siteId === siteId && v.componentId === componentId)) {
    highest = Math.max(highest, v.version);
  }
  return highest;
}

/** Inserts a component version and records which price point it was made for. */
export function insertComponentVersion(
  state: MemoryState,
  journal: Journal,
  version: {
    readonly siteId: number;
    readonly componentId: number;
    readonly version: number;
    readonly pricing: ComponentPricing;
    readonly createdAt: Date;
  },
  pricePointId: number | null,
) {
  state.componentVersions.insert(journal, { ...version, id: state.componentVersions.nextId() });
  if (pricePointId !== null) {
    const marks = state.pricePointTables.componentVersionPricePoints;
    marks.insert(journal, {
      id: marks.nextId(),
      siteId: version.siteId,
      componentId: version.componentId,
      version: version.version,
      pricePointId,
    });
  }
  return structuredClone(version);
}

/** Components and their versions over the memory tables. */
export function memoryComponents(state: MemoryState, journal: Journal): ComponentsRepository {
  const handleTaken = (siteId: number, handle: string | null | undefined, exceptId?: number) =>
    handle != null &&
    state.components.count((c) => c.siteId === siteId && c.handle === handle && c.id !== exceptId) > 0;
  const pricePoints = state.pricePointTables.componentPricePoints;
  return {
    async insert(component, pricing) {
      if (handleTaken(component.siteId, component.handle))
        throw new BillingError('conflict', 'Handle is already taken.');
      const stored = state.components.insert(journal, {
        ...component,
        id: state.components.nextId(),
        currentVersion: 1,
      });
      // Every component has a default price point from the start, named as the service names it.
      const pricePoint = pricePoints.insert(journal, {
        id: pricePoints.nextId(),
        siteId: stored.siteId,
        componentId: stored.id,
        name: 'Original',
        handle: 'original',
        type: 'default',
        version: 1,
        archivedAt: null,
        createdAt: component.createdAt,
        updatedAt: component.createdAt,
      });
      const version = insertComponentVersion(
        state,
        journal,
        { siteId: stored.siteId, componentId: stored.id, version: 1, pricing, createdAt: component.createdAt },
        pricePoint.id,
      );
      return { component: stored, version };
    },
    async addVersion(siteId, componentId, expectedCurrent, pricing, now) {
      const component = state.components.get(componentId);
      if (component === undefined || component.siteId !== siteId || component.currentVersion !== expectedCurrent)
        return undefined;
      // Numbered after the highest: other price points' versions may come after the current one.
      const number = highestComponentVersion(state, siteId, componentId) + 1;
      const defaultPricePoint = pricePoints.findIndexed(
        state.pricePointTables.componentPricePointsByComponent,
        keyOf(siteId, componentId),
        (p) => p.type === 'default',
      );
      if (defaultPricePoint !== undefined)
        pricePoints.replace(journal, { ...defaultPricePoint, version: number, updatedAt: now });
      const version = insertComponentVersion(
        state,
        journal,
        { siteId, componentId, version: number, pricing, createdAt: now },
        defaultPricePoint?.id ?? null,
      );
      const updated = state.components.replace(journal, {
        ...component,
        currentVersion: number,
        updatedAt: now,
      })!;
      return { component: updated, version };
    },
    async update(siteId, componentId, patch) {
      const component = state.components.get(componentId);
      if (component === undefined || component.siteId !== siteId) return undefined;
      if (patch.handle !== undefined && handleTaken(siteId, patch.handle, componentId))
        throw new BillingError('conflict', 'Handle is already taken.');
      return state.components.replace(journal, { ...component, ...patch });
    },
    async findById(siteId, id) {
      const component = state.components.get(id);
      return component?.siteId === siteId ? component : undefined;
    },
    async findByHandle(siteId, handle) {
      return state.components.find((c) => c.siteId === siteId && c.handle === handle);
    },
    async list(siteId, familyId) {
      return state.components.filter((c) => c.siteId === siteId && (familyId === undefined || c.familyId === familyId));
    },
    async findVersion(siteId, componentId, version) {
      const row = state.componentVersions.find(
        (v) => v.siteId === siteId && v.componentId === componentId && v.version === version,
      );
      if (row === undefined) return undefined;
      const { id: _id, ...record } = row;
      return record;
    },
  };
}
