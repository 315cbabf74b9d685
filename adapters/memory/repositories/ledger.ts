import type { LedgerRepository, TransactionRecord } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** The ledger over the memory tables; writers are serialised, so balances chain without locks. */
export function memoryLedger(state: MemoryState, journal: Journal): LedgerRepository {
  const balanceOf = (siteId: number, subscriptionId: number) => {
    const last = state.lastLine.get(subscriptionId);
    const line = last === undefined ? undefined : state.transactions.peek(last);
    return line !== undefined && line.siteId === siteId ? line.endingBalanceInCents : 0;
  };
  return {
    async append(lines) {
      const out: TransactionRecord[] = [];
      for (const { balanceDeltaInCents, ...line } of lines) {
        const starting = balanceOf(line.siteId, line.subscriptionId);
        const stored = state.transactions.insert(journal, {
          ...line,
          id: state.transactions.nextId(),
          startingBalanceInCents: starting,
          endingBalanceInCents: starting + balanceDeltaInCents,
          refundedAmountInCents: 0,
        });
        const previous = state.lastLine.get(line.subscriptionId);
        state.lastLine.set(line.subscriptionId, stored.id);
        journal.push(() => {
          if (previous === undefined) state.lastLine.delete(line.subscriptionId);
          else state.lastLine.set(line.subscriptionId, previous);
        });
        out.push(stored);
      }
      return out;
    },
    async balance(siteId, subscriptionId) {
      return balanceOf(siteId, subscriptionId);
    },
    async listForSubscription(siteId, subscriptionId) {
      return state.transactions.filter((t) => t.siteId === siteId && t.subscriptionId === subscriptionId);
    },
    async findById(siteId, id) {
      const line = state.transactions.get(id);
      return line?.siteId === siteId ? line : undefined;
    },
  };
}
