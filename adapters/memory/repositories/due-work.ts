import { type DueWorkRecord, type DueWorkRepository, SUBSCRIPTION_WORK_KINDS } from 'billing-engine';
import { keyOf, type MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Due work over the memory tables. */
export function memoryDueWork(state: MemoryState, journal: Journal): DueWorkRepository {
  const isOpen = (row: DueWorkRecord) => row.status === 'pending' || row.status === 'claimed';
  return {
    async schedule(work) {
      const taken =
        state.dueWork.countIndexed(
          state.dueWorkByKey,
          keyOf(work.siteId, work.uniqueKey),
          (r) => r.siteId === work.siteId && r.uniqueKey === work.uniqueKey,
        ) > 0;
      if (taken) return undefined;
      return state.dueWork.insert(journal, {
        id: state.dueWork.nextId(),
        siteId: work.siteId,
        kind: work.kind,
        subjectId: work.subjectId,
        dueAt: work.dueAt,
        uniqueKey: work.uniqueKey,
        payload: work.payload ?? {},
        status: 'pending',
        claimedBy: null,
        leaseUntil: null,
        attempts: 0,
        createdAt: work.dueAt,
        updatedAt: work.dueAt,
      });
    },
    async scheduleAll(works) {
      for (const work of works) await this.schedule(work);
    },
    async findByKey(siteId, uniqueKey) {
      return state.dueWork.findIndexed(
        state.dueWorkByKey,
        keyOf(siteId, uniqueKey),
        (r) => r.siteId === siteId && r.uniqueKey === uniqueKey,
      );
    },
    async pendingFor(siteId, subjectId, kinds) {
      return state.dueWork
        .filterIndexed(
          state.dueWorkBySubject,
          keyOf(siteId, subjectId),
          (r) => r.siteId === siteId && r.subjectId === subjectId && isOpen(r) && (!kinds || kinds.includes(r.kind)),
        )
        .sort(byDue);
    },
    async claim(args) {
      const until = args.until.getTime();
      const now = args.now.getTime();
      const candidates: DueWorkRecord[] = [];
      // The earliest open row of each subscription's work: only it may be claimed (port contract).
      const earliest = new Map<string, DueWorkRecord>();
      for (const row of state.dueWork.scan()) {
        if (isOpen(row) && SUBSCRIPTION_WORK_KINDS.includes(row.kind)) {
          const subject = `${row.siteId}:${row.subjectId}`;
          const first = earliest.get(subject);
          if (first === undefined || byDue(row, first) < 0) earliest.set(subject, row);
        }
        if (row.dueAt.getTime() > until) continue;
        if (args.siteId !== undefined && row.siteId !== args.siteId) continue;
        if (args.subjectId !== undefined && row.subjectId !== args.subjectId) continue;
        if (args.kinds && !args.kinds.includes(row.kind)) continue;
        const claimable =
          row.status === 'pending' ||
          (row.status === 'claimed' && row.leaseUntil !== null && row.leaseUntil.getTime() <= now);
        if (claimable) candidates.push(row);
      }
      candidates.sort(byDue);
      const inTurn = candidates.filter(
        (row) =>
          !SUBSCRIPTION_WORK_KINDS.includes(row.kind) || earliest.get(`${row.siteId}:${row.subjectId}`)?.id === row.id,
      );
      return inTurn.slice(0, Math.max(0, args.limit)).map(
        (row) =>
          state.dueWork.replace(journal, {
            ...row,
            status: 'claimed',
            claimedBy: args.owner,
            leaseUntil: args.leaseUntil,
            updatedAt: args.now,
          })!,
      );
    },
    async complete(siteId, id, owner, now) {
      const row = state.dueWork.get(id);
      if (row === undefined || row.siteId !== siteId || row.status !== 'claimed' || row.claimedBy !== owner)
        return false;
      state.dueWork.replace(journal, { ...row, status: 'done', leaseUntil: null, updatedAt: now });
      return true;
    },
    async release(siteId, id, owner, dueAt, now) {
      const row = state.dueWork.get(id);
      if (row === undefined || row.siteId !== siteId || row.status !== 'claimed' || row.claimedBy !== owner)
        return false;
      state.dueWork.replace(journal, {
        ...row,
        status: 'pending',
        claimedBy: null,
        leaseUntil: null,
        dueAt,
        attempts: row.attempts + 1,
        updatedAt: now,
      });
      return true;
    },
    async extendLeases(rows, owner, leaseUntil, now) {
      let extended = 0;
      for (const { siteId, id } of rows) {
        const row = state.dueWork.get(id);
        if (row === undefined || row.siteId !== siteId || row.status !== 'claimed' || row.claimedBy !== owner) continue;
        state.dueWork.replace(journal, { ...row, leaseUntil, updatedAt: now });
        extended += 1;
      }
      return extended;
    },
    async cancelFor(siteId, subjectId, kinds, now) {
      const rows = state.dueWork.filterIndexed(
        state.dueWorkBySubject,
        keyOf(siteId, subjectId),
        (r) => r.siteId === siteId && r.subjectId === subjectId && isOpen(r) && (!kinds || kinds.includes(r.kind)),
      );
      for (const row of rows) state.dueWork.replace(journal, { ...row, status: 'canceled', updatedAt: now });
      return rows.length;
    },
    async countDue({ until, kinds, siteId }) {
      let n = 0;
      for (const row of state.dueWork.scan()) {
        if (!isOpen(row) || row.dueAt.getTime() > until.getTime()) continue;
        if (siteId !== undefined && row.siteId !== siteId) continue;
        if (kinds !== undefined && !kinds.includes(row.kind)) continue;
        n += 1;
      }
      return n;
    },
    async nextDueAt(siteId) {
      let best: Date | undefined;
      for (const row of state.dueWork.scan()) {
        if (row.status !== 'pending' || (siteId !== undefined && row.siteId !== siteId)) continue;
        if (best === undefined || row.dueAt.getTime() < best.getTime()) best = row.dueAt;
      }
      return best === undefined ? undefined : new Date(best.getTime());
    },
  };
}

function byDue(a: DueWorkRecord, b: DueWorkRecord): number {
  return a.dueAt.getTime() - b.dueAt.getTime() || a.id - b.id;
}
