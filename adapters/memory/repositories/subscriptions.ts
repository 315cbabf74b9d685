import {
  BillingError,
  type SubscriptionDateField,
  type SubscriptionRecord,
  type SubscriptionsRepository,
} from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Subscriptions over the memory tables. */
export function memorySubscriptions(state: MemoryState, journal: Journal): SubscriptionsRepository {
  // As the SQL unique index on (site_id, reference): null references never collide.
  const assertReferenceFree = (siteId: number, reference: string, except: number | undefined) => {
    if (state.subscriptions.count((s) => s.siteId === siteId && s.reference === reference && s.id !== except) > 0)
      throw new BillingError('conflict', `Reference ${reference} is already taken.`, { data: { reference } });
  };
  return {
    async insert(subscription) {
      const code = subscription.referralCode;
      if (
        code !== null &&
        state.subscriptions.count((s) => s.siteId === subscription.siteId && s.referralCode === code) > 0
      ) {
        throw new BillingError('conflict', 'Referral code is already taken.');
      }
      const reference = subscription.reference ?? null;
      if (reference !== null) assertReferenceFree(subscription.siteId, reference, undefined);
      return state.subscriptions.insert(journal, {
        ...subscription,
        reference,
        paymentCollectionMethod: subscription.paymentCollectionMethod ?? 'automatic',
        id: state.subscriptions.nextId(),
        version: 1,
      });
    },
    async findById(siteId, id) {
      const subscription = state.subscriptions.get(id);
      return subscription?.siteId === siteId ? subscription : undefined;
    },
    async updateAtVersion(siteId, id, expectedVersion, patch) {
      const current = state.subscriptions.get(id);
      if (current === undefined || current.siteId !== siteId || current.version !== expectedVersion) return undefined;
      const code = patch.referralCode;
      if (
        code != null &&
        state.subscriptions.count((s) => s.siteId === siteId && s.referralCode === code && s.id !== id) > 0
      ) {
        throw new BillingError('conflict', 'Referral code is already taken.');
      }
      if (patch.reference != null) assertReferenceFree(siteId, patch.reference, id);
      return state.subscriptions.replace(journal, { ...current, ...patch, id, siteId, version: current.version + 1 });
    },
    async list(siteId, filter, page) {
      const dateOf = (s: SubscriptionRecord, field: SubscriptionDateField): Date | null => {
        switch (field) {
          case 'current_period_ends_at':
            return s.currentPeriodEndsAt;
          case 'current_period_starts_at':
            return s.currentPeriodStartedAt;
          case 'created_at':
            return s.createdAt;
          case 'activated_at':
            return s.activatedAt;
          case 'canceled_at':
            return s.canceledAt;
          case 'expires_at':
            return s.expiresAt;
          case 'trial_started_at':
            return s.trialStartedAt;
          case 'trial_ended_at':
            return s.trialEndedAt;
          case 'updated_at':
            return s.updatedAt;
          case 'next_assessment_at':
            return s.nextAssessmentAt;
        }
      };
      const inRange = (s: SubscriptionRecord) => {
        if (filter.dateField === undefined || (filter.start === undefined && filter.end === undefined)) return true;
        const value = dateOf(s, filter.dateField);
        if (value === null) return false;
        return (
          (filter.start === undefined || value.getTime() >= filter.start.getTime()) &&
          (filter.end === undefined || value.getTime() <= filter.end.getTime())
        );
      };
      const sort = filter.sort ?? 'created_at';
      const sign = filter.direction === 'asc' ? 1 : -1;
      const rows = state.subscriptions
        .filter(
          (s) =>
            s.siteId === siteId &&
            (filter.states === undefined || filter.states.includes(s.state)) &&
            (filter.productId === undefined || s.productId === filter.productId) &&
            (filter.customerId === undefined || s.customerId === filter.customerId) &&
            (filter.paymentProfileId === undefined || s.paymentProfileId === filter.paymentProfileId) &&
            (filter.couponCode === undefined || s.couponCodes.includes(filter.couponCode)) &&
            (filter.ids === undefined || filter.ids.includes(s.id)) &&
            inRange(s),
        )
        .sort((a, b) => {
          const x = dateOf(a, sort);
          const y = dateOf(b, sort);
          if (x === null || y === null) return x === y ? sign * (a.id - b.id) : x === null ? 1 : -1;
          return sign * (x.getTime() - y.getTime() || a.id - b.id);
        });
      return rows.slice((page.page - 1) * page.perPage, page.page * page.perPage);
    },
    async findByReferralCode(siteId, code) {
      return state.subscriptions.find((s) => s.siteId === siteId && s.referralCode === code);
    },
    async findByReference(siteId, reference) {
      return state.subscriptions.find((s) => s.siteId === siteId && s.reference === reference);
    },
    async countForCustomer(siteId, customerId) {
      return state.subscriptions.count((s) => s.siteId === siteId && s.customerId === customerId);
    },
  };
}
