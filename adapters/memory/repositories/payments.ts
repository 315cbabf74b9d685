import { BillingError, type PaymentAttemptsRepository } from 'billing-engine';
import { keyOf, type MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Payment attempts over the memory tables. */
export function memoryPayments(state: MemoryState, journal: Journal): PaymentAttemptsRepository {
  return {
    async insert(attempt) {
      const taken = state.payments.countIndexed(
        state.paymentsByKey,
        keyOf(attempt.siteId, attempt.idempotencyKey),
        (p) => p.siteId === attempt.siteId && p.idempotencyKey === attempt.idempotencyKey,
      );
      if (taken > 0) {
        throw new BillingError('conflict', 'Payment idempotency key is already taken.');
      }
      return state.payments.insert(journal, { ...attempt, id: state.payments.nextId() });
    },
    async findByKey(siteId, idempotencyKey) {
      return state.payments.findIndexed(
        state.paymentsByKey,
        keyOf(siteId, idempotencyKey),
        (p) => p.siteId === siteId && p.idempotencyKey === idempotencyKey,
      );
    },
    async update(siteId, id, patch) {
      const current = state.payments.get(id);
      if (current === undefined || current.siteId !== siteId) return undefined;
      return state.payments.replace(journal, { ...current, ...patch });
    },
    async listUnresolved(before, limit) {
      return state.payments
        .filter((p) => (p.status === 'pending' || p.status === 'unknown') && p.createdAt.getTime() < before.getTime())
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id - b.id)
        .slice(0, limit);
    },
  };
}
