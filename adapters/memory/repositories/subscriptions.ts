import { BillingError, type SubscriptionsRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Subscriptions over the memory tables. */
export function memorySubscriptions(state: MemoryState, journal: Journal): SubscriptionsRepository {
  return {
    async insert(subscription) {
      const code = subscription.referralCode;
      if (code !== null && state.subscriptions.count((s) => s.siteId === subscription.siteId && s.referralCode === code) > 0) {
        throw new BillingError('conflict', 'Referral code is already taken.');
      }
      return state.subscriptions.insert(journal, { ...subscription, id: state.subscriptions.nextId(), version: 1 });
    },
    async findById(siteId, id) {
      const subscription = state.subscriptions.get(id);
      return subscription?.siteId === siteId ? subscription : undefined;
    },
    async updateAtVersion(siteId, id, expectedVersion, patch) {
      const current = state.subscriptions.get(id);
      if (current === undefined || current.siteId !== siteId || current.version !== expectedVersion) return undefined;
      return state.subscriptions.replace(journal, { ...current, ...patch, id, siteId, version: current.version + 1 });
    },
    async list(siteId, filter, page) {
      const rows = state.subscriptions
        .filter(
          (s) =>
            s.siteId === siteId &&
            (filter.states === undefined || filter.states.includes(s.state)) &&
            (filter.productId === undefined || s.productId === filter.productId) &&
            (filter.customerId === undefined || s.customerId === filter.customerId),
        )
        .sort((a, b) => b.id - a.id);
      return rows.slice((page.page - 1) * page.perPage, page.page * page.perPage);
    },
    async findByReferralCode(siteId, code) {
      return state.subscriptions.find((s) => s.siteId === siteId && s.referralCode === code);
    },
    async countForCustomer(siteId, customerId) {
      return state.subscriptions.count((s) => s.siteId === siteId && s.customerId === customerId);
    },
  };
}
