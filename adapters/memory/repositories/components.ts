import { BillingError, type ComponentsRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Components and their versions over the memory tables. */
export function memoryComponents(state: MemoryState, journal: Journal): ComponentsRepository {
  const handleTaken = (siteId: number, handle: string | null | undefined, exceptId?: number) =>
    handle != null &&
    state.components.count((c) => c.siteId === siteId && c.handle === handle && c.id !== exceptId) > 0;
  return {
    async insert(component, pricing) {
      if (handleTaken(component.siteId, component.handle))
        throw new BillingError('conflict', 'Handle is already taken.');
      const stored = state.components.insert(journal, {
        ...component,
        id: state.components.nextId(),
        currentVersion: 1,
      });
      const version = {
        siteId: stored.siteId,
        componentId: stored.id,
        version: 1,
        pricing,
        createdAt: component.createdAt,
      };
      state.componentVersions.insert(journal, { ...version, id: state.componentVersions.nextId() });
      return { component: stored, version: structuredClone(version) };
    },
    async addVersion(siteId, componentId, expectedCurrent, pricing, now) {
      const component = state.components.get(componentId);
      if (component === undefined || component.siteId !== siteId || component.currentVersion !== expectedCurrent)
        return undefined;
      const version = { siteId, componentId, version: expectedCurrent + 1, pricing, createdAt: now };
      state.componentVersions.insert(journal, { ...version, id: state.componentVersions.nextId() });
      const updated = state.components.replace(journal, {
        ...component,
        currentVersion: version.version,
        updatedAt: now,
      })!;
      return { component: updated, version: structuredClone(version) };
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
