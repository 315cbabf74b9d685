import type { IdempotencyRepository } from 'billing-engine';
import { keyOf, type MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Insert-if-absent claims over the memory tables; writers are serialised, so a check-then-insert is atomic. */
export function memoryIdempotency(state: MemoryState, journal: Journal): IdempotencyRepository {
  return {
    async claim(siteId, scope, key, now, expiresAt) {
      const existing = state.idempotency.findIndexed(
        state.idempotencyByKey,
        keyOf(siteId, scope, key),
        (r) => r.siteId === siteId && r.scope === scope && r.key === key,
      );
      if (existing !== undefined) {
        const lapsed = existing.expiresAt !== null && existing.expiresAt.getTime() <= now.getTime();
        if (!lapsed) return false;
        state.idempotency.replace(journal, { ...existing, expiresAt, createdAt: now });
        return true;
      }
      state.idempotency.insert(journal, {
        id: state.idempotency.nextId(),
        siteId,
        scope,
        key,
        expiresAt,
        createdAt: now,
      });
      return true;
    },
    async release(siteId, scope, key) {
      const existing = state.idempotency.findIndexed(
        state.idempotencyByKey,
        keyOf(siteId, scope, key),
        (r) => r.siteId === siteId && r.scope === scope && r.key === key,
      );
      return existing === undefined ? false : state.idempotency.delete(journal, existing.id);
    },
  };
}
