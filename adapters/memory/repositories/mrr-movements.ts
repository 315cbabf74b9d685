/** MRR movements in memory. */
import type { MrrMovementListFilter, MrrMovementRecord, MrrMovementsRepository } from 'billing-engine';
import type { MemoryState, SiteOwnedTable } from '../memory-state.js';
import { type Journal, MemoryTable } from '../memory-table.js';

/** An index key, as `keyOf` of memory-state spells them (kept local: memory-state imports this file). */
function keyOf(...parts: readonly (string | number)[]): string {
  return parts.join('\u0000');
}

/** The movement table; `MemoryState` holds one. */
export class MrrMovementTables {
  readonly mrrMovements = new MemoryTable<MrrMovementRecord>();
  /** Movements by site and subscription: every command with a subscription event reads the last one. */
  readonly bySubscription = this.mrrMovements.index((m) => keyOf(m.siteId, m.subscriptionId));

  /** Movements are customer data: cleared with it, and with the site. */
  customerOwned(): SiteOwnedTable[] {
    return [this.mrrMovements];
  }
}

/** MRR movements over `state.mrrMovementTables`. */
export function memoryMrrMovements(state: MemoryState, journal: Journal): MrrMovementsRepository {
  const t = state.mrrMovementTables;
  const selected = (siteId: number, filter: MrrMovementListFilter): MrrMovementRecord[] => {
    const rows =
      filter.subscriptionId === undefined
        ? t.mrrMovements.filter((m) => m.siteId === siteId && m.category !== 'baseline')
        : t.mrrMovements.filterIndexed(
            t.bySubscription,
            keyOf(siteId, filter.subscriptionId),
            (m) => m.siteId === siteId && m.subscriptionId === filter.subscriptionId && m.category !== 'baseline',
          );
    return filter.direction === 'desc' ? rows.reverse() : rows;
  };
  return {
    async insert(movement) {
      return t.mrrMovements.insert(journal, {
        ...movement,
        lineItems: movement.lineItems.map((line) => ({ ...line })),
        id: t.mrrMovements.nextId(),
      });
    },
    async findLast(siteId, subscriptionId) {
      const ids = t.bySubscription.ids(keyOf(siteId, subscriptionId));
      for (let i = ids.length - 1; i >= 0; i--) {
        const row = t.mrrMovements.get(ids[i]!);
        if (row !== undefined && row.siteId === siteId && row.subscriptionId === subscriptionId) return row;
      }
      return undefined;
    },
    async list(siteId, filter, page) {
      const start = (page.page - 1) * page.perPage;
      return selected(siteId, filter).slice(start, start + page.perPage);
    },
    async count(siteId, filter) {
      if (filter.subscriptionId === undefined)
        return t.mrrMovements.count((m) => m.siteId === siteId && m.category !== 'baseline');
      return t.mrrMovements.countIndexed(
        t.bySubscription,
        keyOf(siteId, filter.subscriptionId),
        (m) => m.siteId === siteId && m.subscriptionId === filter.subscriptionId && m.category !== 'baseline',
      );
    },
  };
}
