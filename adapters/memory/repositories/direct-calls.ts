import { BillingError, type DirectCallsRepository } from 'billing-engine';
import { keyOf, type MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Direct-post call records and replay claims over the memory tables; writers are serialised, so a check-then-insert is atomic. */
export function memoryDirectCalls(state: MemoryState, journal: Journal): DirectCallsRepository {
  return {
    async insert(call) {
      if (state.directCalls.count((r) => r.call.id === call.id) > 0)
        throw new BillingError('conflict', 'Call id is already taken.');
      const row = state.directCalls.insert(journal, { id: state.directCalls.nextId(), siteId: call.siteId, call });
      return row.call;
    },
    async findById(siteId, id) {
      return state.directCalls.find((r) => r.siteId === siteId && r.call.id === id)?.call;
    },
    async claimPost({ siteId, inputHash, nonceKey, at }) {
      const held = state.directPostClaims.findIndexed(
        state.directPostClaimsByHash,
        keyOf(siteId, inputHash),
        (r) => r.siteId === siteId && r.inputHash === inputHash,
      );
      if (nonceKey === null) {
        // Posts without a nonce may repeat; only a protected post's signed input is refused.
        if (held !== undefined) return held.nonceKey === null;
      } else {
        if (held !== undefined) return false;
        const nonceHeld = state.directPostClaims.findIndexed(
          state.directPostClaimsByNonce,
          keyOf(siteId, nonceKey),
          (r) => r.siteId === siteId && r.nonceKey === nonceKey,
        );
        if (nonceHeld !== undefined) return false;
      }
      state.directPostClaims.insert(journal, {
        id: state.directPostClaims.nextId(),
        siteId,
        inputHash,
        nonceKey,
        createdAt: at,
      });
      return true;
    },
  };
}
