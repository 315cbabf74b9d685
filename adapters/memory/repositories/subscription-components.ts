import type { SubscriptionComponentsRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Subscription components, allocations and usages over the memory tables. */
export function memorySubscriptionComponents(state: MemoryState, journal: Journal): SubscriptionComponentsRepository {
  const findRow = (siteId: number, subscriptionId: number, componentId: number) =>
    state.subscriptionComponents.find(
      (r) => r.siteId === siteId && r.subscriptionId === subscriptionId && r.componentId === componentId,
    );
  return {
    async upsert(row) {
      const existing = findRow(row.siteId, row.subscriptionId, row.componentId);
      if (existing)
        return state.subscriptionComponents.replace(journal, {
          ...existing,
          ...row,
          id: existing.id,
          createdAt: existing.createdAt,
        })!;
      return state.subscriptionComponents.insert(journal, { ...row, id: state.subscriptionComponents.nextId() });
    },
    async ensure(row) {
      return (
        findRow(row.siteId, row.subscriptionId, row.componentId) ??
        state.subscriptionComponents.insert(journal, { ...row, id: state.subscriptionComponents.nextId() })
      );
    },
    async find(siteId, subscriptionId, componentId) {
      return findRow(siteId, subscriptionId, componentId);
    },
    async listForSubscription(siteId, subscriptionId) {
      return state.subscriptionComponents
        .filter((r) => r.siteId === siteId && r.subscriptionId === subscriptionId)
        .sort((a, b) => a.componentId - b.componentId);
    },
    async addUsage(siteId, subscriptionId, componentId, quantity, now) {
      const before = findRow(siteId, subscriptionId, componentId);
      if (!before) return undefined;
      const after = state.subscriptionComponents.replace(journal, {
        ...before,
        unitBalance: before.unitBalance + quantity,
        updatedAt: now,
      })!;
      return { before, after };
    },
    async insertAllocation(allocation) {
      return state.allocations.insert(journal, { ...allocation, id: state.allocations.nextId() });
    },
    async listAllocations(siteId, subscriptionId, componentId) {
      return state.allocations.filter(
        (a) =>
          a.siteId === siteId &&
          a.subscriptionId === subscriptionId &&
          (componentId === undefined || a.componentId === componentId),
      );
    },
    async insertUsage(usage) {
      return state.usages.insert(journal, { ...usage, id: state.usages.nextId() });
    },
    async listUsages(siteId, subscriptionId, componentId) {
      return state.usages.filter(
        (u) => u.siteId === siteId && u.subscriptionId === subscriptionId && u.componentId === componentId,
      );
    },
  };
}
