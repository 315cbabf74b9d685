import { BillingError, type MetafieldsRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Metafields and metadata over the memory tables. */
export function memoryMetafields(state: MemoryState, journal: Journal): MetafieldsRepository {
  return {
    async insertField(field) {
      const taken =
        state.metafields.count(
          (f) => f.siteId === field.siteId && f.resourceType === field.resourceType && f.name === field.name,
        ) > 0;
      if (taken) throw new BillingError('conflict', 'Name is already taken.');
      return state.metafields.insert(journal, { ...field, id: state.metafields.nextId() });
    },
    async findField(siteId, resourceType, name) {
      return state.metafields.find((f) => f.siteId === siteId && f.resourceType === resourceType && f.name === name);
    },
    async listFields(siteId, resourceType) {
      return state.metafields.filter((f) => f.siteId === siteId && f.resourceType === resourceType);
    },
    async updateField(siteId, id, patch) {
      const field = state.metafields.get(id);
      if (field === undefined || field.siteId !== siteId) return undefined;
      if (patch.name !== undefined && patch.name !== field.name) {
        const taken =
          state.metafields.count(
            (f) => f.siteId === siteId && f.resourceType === field.resourceType && f.name === patch.name,
          ) > 0;
        if (taken) throw new BillingError('conflict', 'Name is already taken.');
        for (const value of state.metadata.filter((m) => m.siteId === siteId && m.metafieldId === id)) {
          state.metadata.replace(journal, { ...value, name: patch.name });
        }
      }
      return state.metafields.replace(journal, { ...field, ...patch });
    },
    async deleteField(siteId, id) {
      const field = state.metafields.peek(id);
      if (field === undefined || field.siteId !== siteId) return false;
      state.metadata.deleteWhere(journal, (m) => m.siteId === siteId && m.metafieldId === id);
      return state.metafields.delete(journal, id);
    },
    async setValue({ now, ...value }) {
      const existing = state.metadata.find(
        (m) =>
          m.siteId === value.siteId &&
          m.resourceType === value.resourceType &&
          m.resourceId === value.resourceId &&
          m.metafieldId === value.metafieldId,
      );
      if (existing)
        return state.metadata.replace(journal, { ...existing, name: value.name, value: value.value, updatedAt: now })!;
      return state.metadata.insert(journal, { ...value, id: state.metadata.nextId(), createdAt: now, updatedAt: now });
    },
    async listValues(siteId, resourceType, resourceId) {
      return state.metadata
        .filter((m) => m.siteId === siteId && m.resourceType === resourceType && m.resourceId === resourceId)
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
    },
    async deleteValue(siteId, resourceType, resourceId, name) {
      return (
        state.metadata.deleteWhere(
          journal,
          (m) =>
            m.siteId === siteId && m.resourceType === resourceType && m.resourceId === resourceId && m.name === name,
        ) > 0
      );
    },
    async resourcesWithValue(siteId, resourceType, name, value) {
      return state.metadata
        .filter((m) => m.siteId === siteId && m.resourceType === resourceType && m.name === name && m.value === value)
        .map((m) => m.resourceId)
        .sort((a, b) => a - b);
    },
  };
}
