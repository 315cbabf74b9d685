import {
  BillingError,
  type MetadataListFilter,
  type MetadataRecord,
  type MrrSubscriptionFilter,
  type MrrSubscriptionInput,
  type ReportDirection,
  type ReportsRepository,
  type SubscriptionComponentListFilter,
  type SubscriptionComponentReportRow,
  type SubscriptionCounts,
  type SubscriptionRecord,
  type SubscriptionState,
} from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** One page of rows already in order (1-based pages). */
function pageOf<T>(rows: readonly T[], page: { readonly page: number; readonly perPage: number }): T[] {
  const start = (page.page - 1) * page.perPage;
  return rows.slice(start, start + page.perPage);
}

function byId<T extends { readonly id: number }>(direction: ReportDirection | undefined) {
  return (a: T, b: T) => (direction === 'desc' ? b.id - a.id : a.id - b.id);
}

/** Site-wide report reads over the memory tables. */
export function memoryReports(state: MemoryState, _journal: Journal): ReportsRepository {
  const mrrSubscriptions = (siteId: number, filter: MrrSubscriptionFilter): SubscriptionRecord[] => {
    const ids = filter.subscriptionIds === undefined ? undefined : new Set(filter.subscriptionIds);
    return state.subscriptions.filter(
      (s) =>
        s.siteId === siteId &&
        filter.states.includes(s.state) &&
        (ids === undefined || ids.has(s.id)) &&
        (filter.afterId === undefined || s.id > filter.afterId),
    );
  };

  const metadataRows = (siteId: number, resourceType: string, filter: MetadataListFilter): MetadataRecord[] => {
    const ids = filter.resourceIds === undefined ? undefined : new Set(filter.resourceIds);
    const field = filter.dateField === 'created_at' ? 'createdAt' : 'updatedAt';
    return state.metadata
      .filter((m) => {
        if (m.siteId !== siteId || m.resourceType !== resourceType) return false;
        if (ids !== undefined && !ids.has(m.resourceId)) return false;
        if (filter.dateField === undefined) return true;
        const t = m[field].getTime();
        return (
          (filter.since === undefined || t >= filter.since.getTime()) &&
          (filter.until === undefined || t <= filter.until.getTime())
        );
      })
      .sort(byId(filter.direction));
  };

  return {
    async countSubscriptions(siteId, createdSince): Promise<SubscriptionCounts> {
      const byState: Partial<Record<SubscriptionState, number>> = {};
      let total = 0;
      let created = 0;
      for (const s of state.subscriptions.scan()) {
        if (s.siteId !== siteId) continue;
        total += 1;
        if (s.createdAt.getTime() >= createdSince.getTime()) created += 1;
        byState[s.state] = (byState[s.state] ?? 0) + 1;
      }
      return { total, createdSince: created, byState };
    },

    async netRevenue(siteId, from, until) {
      let net = 0;
      for (const line of state.transactions.scan()) {
        if (line.siteId !== siteId || line.success === false) continue;
        const t = line.createdAt.getTime();
        if ((from !== null && t < from.getTime()) || t > until.getTime()) continue;
        if (line.type === 'payment') net += line.amountInCents;
        else if (line.type === 'refund') net -= line.amountInCents;
      }
      return net;
    },

    async countMrrSubscriptions(siteId, filter) {
      return mrrSubscriptions(siteId, filter).length;
    },

    async listMrrInputs(siteId, filter, direction, page): Promise<MrrSubscriptionInput[]> {
      const rows = pageOf(mrrSubscriptions(siteId, filter).sort(byId(direction)), page);
      return rows.map((s) => {
        const version = state.productVersions.find(
          (v) => v.siteId === siteId && v.productId === s.productId && v.version === s.productVersion,
        );
        if (version === undefined)
          throw new BillingError('storage', `Subscription ${s.id} is pinned to a missing product version.`);
        const components = state.subscriptionComponents
          .filter((r) => r.siteId === siteId && r.subscriptionId === s.id)
          .sort((a, b) => a.componentId - b.componentId)
          .map((r) => {
            const component = state.components.peek(r.componentId);
            const pinned = state.componentVersions.find(
              (v) => v.siteId === siteId && v.componentId === r.componentId && v.version === r.componentVersion,
            );
            if (component === undefined || pinned === undefined)
              throw new BillingError(
                'storage',
                `Subscription component ${r.id} refers to a missing component version.`,
              );
            return {
              componentId: r.componentId,
              kind: component.kind,
              allocatedQuantity: r.allocatedQuantity,
              unitBalance: r.unitBalance,
              pricing: pinned.pricing,
            };
          });
        return {
          subscriptionId: s.id,
          state: s.state,
          terms: version.terms,
          couponCodes: [...s.couponCodes],
          couponUses: numberRecord(s.data.couponUses),
          couponDeferred: stringList(s.data.couponDeferred),
          components,
        };
      });
    },

    async countMetadata(siteId, resourceType, filter) {
      return metadataRows(siteId, resourceType, filter).length;
    },

    async listMetadata(siteId, resourceType, filter, page) {
      return pageOf(metadataRows(siteId, resourceType, filter), page);
    },

    async listSubscriptionComponents(
      siteId,
      filter: SubscriptionComponentListFilter,
      page,
    ): Promise<SubscriptionComponentReportRow[]> {
      const subscriptionIds = filter.subscriptionIds === undefined ? undefined : new Set(filter.subscriptionIds);
      const families = filter.productFamilyIds === undefined ? undefined : new Set(filter.productFamilyIds);
      const rows = state.subscriptionComponents.filter((r) => {
        if (r.siteId !== siteId) return false;
        if (subscriptionIds !== undefined && !subscriptionIds.has(r.subscriptionId)) return false;
        const t = r.updatedAt.getTime();
        if (filter.updatedSince !== undefined && t < filter.updatedSince.getTime()) return false;
        if (filter.updatedUntil !== undefined && t > filter.updatedUntil.getTime()) return false;
        if (families !== undefined && !families.has(state.components.peek(r.componentId)?.familyId ?? -1)) return false;
        if (filter.subscriptionStates !== undefined) {
          const subscription = state.subscriptions.peek(r.subscriptionId);
          if (subscription === undefined || !filter.subscriptionStates.includes(subscription.state)) return false;
        }
        return true;
      });
      const sign = filter.direction === 'desc' ? -1 : 1;
      rows.sort((a, b) =>
        filter.sort === 'updated_at'
          ? sign * (a.updatedAt.getTime() - b.updatedAt.getTime() || a.id - b.id)
          : sign * (a.id - b.id),
      );
      return pageOf(rows, page).map((row) => {
        const component = state.components.get(row.componentId);
        const pinned = state.componentVersions.find(
          (v) => v.siteId === siteId && v.componentId === row.componentId && v.version === row.componentVersion,
        );
        if (component === undefined || pinned === undefined)
          throw new BillingError('storage', `Subscription component ${row.id} refers to a missing component version.`);
        const { id: _id, ...version } = pinned;
        return { subscriptionComponent: row, component, version };
      });
    },
  };
}

/** `data.couponUses` as counts; anything that is not a count is left out. */
function numberRecord(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof value !== 'object' || value === null) return out;
  for (const [key, count] of Object.entries(value)) if (typeof count === 'number') out[key] = count;
  return out;
}

/** `data.couponDeferred` as codes; anything that is not a string is left out. */
function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
