import { balanceOutOfRange, type LedgerRepository, type TransactionRecord } from 'billing-engine';
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
        const ending = starting + balanceDeltaInCents;
        // The journal undoes the lines already inserted when the command's transaction rolls back.
        if (!Number.isSafeInteger(ending)) throw balanceOutOfRange(line.subscriptionId);
        const stored = state.transactions.insert(journal, {
          ...line,
          id: state.transactions.nextId(),
          startingBalanceInCents: starting,
          endingBalanceInCents: ending,
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
    async list(siteId, filter, page) {
      const rows = state.transactions.filter(
        (t) =>
          t.siteId === siteId &&
          (filter.subscriptionId === undefined || t.subscriptionId === filter.subscriptionId) &&
          (filter.types === undefined || filter.types.includes(t.type)) &&
          (filter.kinds === undefined || (t.kind !== null && filter.kinds.includes(t.kind))) &&
          (filter.sinceId === undefined || t.id >= filter.sinceId) &&
          (filter.maxId === undefined || t.id <= filter.maxId) &&
          (filter.since === undefined || t.createdAt.getTime() >= filter.since.getTime()) &&
          (filter.until === undefined || t.createdAt.getTime() <= filter.until.getTime()),
      );
      const sign = filter.direction === 'desc' ? -1 : 1;
      rows.sort((a, b) =>
        filter.orderBy === 'created_at'
          ? sign * (a.createdAt.getTime() - b.createdAt.getTime() || a.id - b.id)
          : sign * (a.id - b.id),
      );
      return rows.slice((page.page - 1) * page.perPage, page.page * page.perPage);
    },
    async addRefunded(siteId, paymentId, amountInCents) {
      const line = state.transactions.get(paymentId);
      if (line === undefined || line.siteId !== siteId || line.type !== 'payment') return undefined;
      const total = line.refundedAmountInCents + amountInCents;
      if (total > line.amountInCents || total < 0) return undefined;
      return state.transactions.replace(journal, {
        ...line,
        refundedAmountInCents: line.refundedAmountInCents + amountInCents,
      });
    },
  };
}
