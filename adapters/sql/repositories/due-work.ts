/**
 * Due work on SQL. Claims are one statement: a materialised CTE picks the next rows in
 * `(due_at, id)` order and an UPDATE marks exactly those as claimed. On Postgres the CTE locks what
 * it picks with `FOR UPDATE SKIP LOCKED`, so concurrent claimers pass over each other's rows
 * instead of waiting or double-claiming; on SQLite the transaction already holds the database's
 * single write lock (`begin immediate`), so no other claimer can run in between.
 */
import {
  BillingError,
  type DueWorkKind,
  type DueWorkRecord,
  type DueWorkRepository,
  type NewDueWork,
  SUBSCRIPTION_WORK_KINDS,
} from 'billing-engine';
import { type QueryResult, type Selectable, sql } from 'kysely';
import { decodeId, decodeInstant, decodeInteger, decodeJsonObject, decodeNullableInstant } from '../codecs.js';
import { compiledOnce } from '../compiled-once.js';
import type { DueWorkTable } from '../schema.js';
import type { RepositoryContext } from './repository-context.js';

/** Statuses of rows that are still to be done; the claim and subject indexes are partial on them. */
/**
 * Open rows, written as the literal predicate of the partial indexes `due_work_claim_idx` and
 * `due_work_subject_idx`: SQLite uses a partial index only when the query repeats its predicate,
 * and a parameterised `status in (?, ?)` does not count, so the claim would scan every row.
 */
const OPEN = sql<boolean>`status in ('pending', 'claimed')`;

/** A claimed item marked done, compiled once (see `compiled-once.ts`): once per item. */
const completeItem = compiledOnce((db, updatedAt: Date | number, siteId: number, id: number, owner: string) =>
  db
    .updateTable('due_work')
    .set({ status: 'done', lease_until: null, updated_at: updatedAt })
    .where('site_id', '=', siteId)
    .where('id', '=', id)
    .where('status', '=', 'claimed')
    .where('claimed_by', '=', owner),
);

/** One held item's lease extended, compiled once: each due payment's outcome checks its hold so. */
const extendLease = compiledOnce(
  (db, leaseUntil: Date | number, updatedAt: Date | number, siteId: number, id: number, owner: string) =>
    db
      .updateTable('due_work')
      .set({ lease_until: leaseUntil, updated_at: updatedAt })
      .where('site_id', '=', siteId)
      .where('id', '=', id)
      .where('status', '=', 'claimed')
      .where('claimed_by', '=', owner),
);

/** A subject's open work of one kind canceled, compiled once: each due payment's outcome ends its reconciliation so. */
const cancelKindFor = compiledOnce(
  (db, updatedAt: Date | number, siteId: number, subjectId: number, kind: DueWorkKind) =>
    db
      .updateTable('due_work')
      .set({ status: 'canceled', updated_at: updatedAt })
      .where('site_id', '=', siteId)
      .where('subject_id', '=', subjectId)
      .where(OPEN)
      .where('kind', 'in', [kind]),
);

/**
 * One row of due work inserted, compiled once (see `compiled-once.ts`): a renewal schedules two.
 * The unique (site_id, unique_key) index makes a second schedule of one key a no-op even when two
 * workers race: the loser's insert waits for the winner's row and then does nothing.
 */
const insertDueWork = compiledOnce(
  (db, siteId: number, kind: string, subjectId: number, stamp: Date | number, uniqueKey: string, payload: string) =>
    db
      .insertInto('due_work')
      .values({
        site_id: siteId,
        kind: kind as DueWorkKind,
        subject_id: subjectId,
        due_at: stamp,
        unique_key: uniqueKey,
        payload,
        status: 'pending',
        claimed_by: null,
        lease_until: null,
        attempts: 0,
        created_at: stamp,
        updated_at: stamp,
      })
      .onConflict((oc) => oc.columns(['site_id', 'unique_key']).doNothing())
      .returningAll(),
);

/** {@link insertDueWork} of `work`, stamped as {@link newDueWorkRow} stamps it. */
function scheduleOne(context: RepositoryContext, work: NewDueWork) {
  const row = newDueWorkRow(work, context.encode);
  return insertDueWork.run(context, row.site_id, row.kind, row.subject_id, row.due_at, row.unique_key, row.payload);
}

/** Rows an UPDATE of a compiled statement changed. */
function changed(result: QueryResult<unknown>): number {
  return Number(result.numAffectedRows ?? 0n);
}

/** Builds the due-work repository of one transaction. */
export function createDueWorkRepository(context: RepositoryContext): DueWorkRepository {
  const { db, encode, hooks } = context;
  return {
    async schedule(work) {
      const [row] = (await scheduleOne(context, work)).rows;
      return row && decodeDueWork(row);
    },

    async scheduleAll(works) {
      if (works.length === 0) return;
      if (works.length === 1) {
        await scheduleOne(context, works[0]!);
        return;
      }
      await db
        .insertInto('due_work')
        .values(works.map((work) => newDueWorkRow(work, encode)))
        .onConflict((oc) => oc.columns(['site_id', 'unique_key']).doNothing())
        .execute();
    },

    async findByKey(siteId, uniqueKey) {
      const row = await db
        .selectFrom('due_work')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('unique_key', '=', uniqueKey)
        .executeTakeFirst();
      return row && decodeDueWork(row);
    },

    async pendingFor(siteId, subjectId, kinds) {
      if (kinds !== undefined && kinds.length === 0) return [];
      const rows = await db
        .selectFrom('due_work')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('subject_id', '=', subjectId)
        .where(OPEN)
        .$if(kinds !== undefined, (qb) => qb.where('kind', 'in', kinds as readonly DueWorkKind[]))
        .orderBy('due_at')
        .orderBy('id')
        .execute();
      return rows.map(decodeDueWork);
    },

    async claim({ until, limit, owner, leaseUntil, now, kinds, siteId, subjectId }) {
      if (limit <= 0 || (kinds !== undefined && kinds.length === 0)) return [];
      const rows = await db
        .with(
          (cte) => cte('picked').materialized(),
          (qb) =>
            qb
              .selectFrom('due_work')
              .select(['site_id', 'id'])
              // Redundant with the OR below, but it lets SQLite use the partial claim index.
              .where(OPEN)
              .where((eb) =>
                eb.or([
                  eb('status', '=', 'pending'),
                  eb.and([eb('status', '=', 'claimed'), eb('lease_until', '<=', encode.instant(now))]),
                ]),
              )
              .where('due_at', '<=', encode.instant(until))
              .$if(siteId !== undefined, (q) => q.where('site_id', '=', siteId as number))
              .$if(subjectId !== undefined, (q) => q.where('subject_id', '=', subjectId as number))
              .$if(kinds !== undefined, (q) => q.where('kind', 'in', kinds as readonly DueWorkKind[]))
              // A subscription's row waits while an earlier one of its work is open (port contract),
              // found through due_work_subject_idx.
              .where((eb) =>
                eb.or([
                  eb('kind', 'not in', SUBSCRIPTION_WORK_KINDS),
                  eb.not(
                    eb.exists(
                      eb
                        .selectFrom('due_work as earlier')
                        .select(sql<number>`1`.as('one'))
                        .whereRef('earlier.site_id', '=', 'due_work.site_id')
                        .whereRef('earlier.subject_id', '=', 'due_work.subject_id')
                        .where(sql<boolean>`earlier.status in ('pending', 'claimed')`)
                        .where('earlier.kind', 'in', SUBSCRIPTION_WORK_KINDS)
                        .where((e) =>
                          e.or([
                            e('earlier.due_at', '<', e.ref('due_work.due_at')),
                            e.and([
                              e('earlier.due_at', '=', e.ref('due_work.due_at')),
                              e('earlier.id', '<', e.ref('due_work.id')),
                            ]),
                          ]),
                        ),
                    ),
                  ),
                ]),
              )
              .orderBy('due_at')
              .orderBy('id')
              .limit(limit)
              .$if(hooks.rowLocks, (q) => q.forUpdate().skipLocked()),
        )
        .updateTable('due_work')
        .set({
          status: 'claimed',
          claimed_by: owner,
          lease_until: encode.instant(leaseUntil),
          updated_at: encode.instant(now),
        })
        .where(sql<boolean>`(site_id, id) in (select site_id, id from picked)`)
        .returningAll()
        .execute();
      // RETURNING has no defined order.
      return rows.map(decodeDueWork).sort(byDueThenId);
    },

    async complete(siteId, id, owner, now) {
      return changed(await completeItem.run(context, encode.instant(now), siteId, id, owner)) > 0;
    },

    async release(siteId, id, owner, dueAt, now) {
      const result = await db
        .updateTable('due_work')
        .set((eb) => ({
          status: 'pending',
          due_at: encode.instant(dueAt),
          attempts: eb('attempts', '+', 1),
          claimed_by: null,
          lease_until: null,
          updated_at: encode.instant(now),
        }))
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .where('status', '=', 'claimed')
        .where('claimed_by', '=', owner)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async extendLeases(rows, owner, leaseUntil, now) {
      if (rows.length === 0) return 0;
      if (rows.length === 1) {
        const [{ siteId, id }] = rows as [{ siteId: number; id: number }];
        return changed(
          await extendLease.run(context, encode.instant(leaseUntil), encode.instant(now), siteId, id, owner),
        );
      }
      let extended = 0;
      // One statement per site: the ids of one site in one IN list, within the claim index's rows.
      const bySite = new Map<number, number[]>();
      for (const row of rows) bySite.set(row.siteId, [...(bySite.get(row.siteId) ?? []), row.id]);
      for (const [siteId, ids] of bySite) {
        const result = await db
          .updateTable('due_work')
          .set({ lease_until: encode.instant(leaseUntil), updated_at: encode.instant(now) })
          .where('site_id', '=', siteId)
          .where('id', 'in', ids)
          .where('status', '=', 'claimed')
          .where('claimed_by', '=', owner)
          .executeTakeFirst();
        extended += Number(result.numUpdatedRows);
      }
      return extended;
    },

    async cancelFor(siteId, subjectId, kinds, now) {
      if (kinds !== undefined && kinds.length === 0) return 0;
      if (kinds !== undefined && kinds.length === 1) {
        return changed(await cancelKindFor.run(context, encode.instant(now), siteId, subjectId, kinds[0]!));
      }
      const result = await db
        .updateTable('due_work')
        .set({ status: 'canceled', updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('subject_id', '=', subjectId)
        .where(OPEN)
        .$if(kinds !== undefined, (qb) => qb.where('kind', 'in', kinds as readonly DueWorkKind[]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async countDue({ until, kinds, siteId }) {
      if (kinds !== undefined && kinds.length === 0) return 0;
      const row = await db
        .selectFrom('due_work')
        .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
        .where(OPEN)
        .where('due_at', '<=', encode.instant(until))
        .$if(siteId !== undefined, (q) => q.where('site_id', '=', siteId as number))
        .$if(kinds !== undefined, (q) => q.where('kind', 'in', kinds as readonly DueWorkKind[]))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async nextDueAt(siteId) {
      const row = await db
        .selectFrom('due_work')
        .select((eb) => eb.fn.min('due_at').as('next'))
        // `in` as well as `=`, so that SQLite sees the partial index's predicate and uses it.
        .where(OPEN)
        .where('status', '=', 'pending')
        .$if(siteId !== undefined, (qb) => qb.where('site_id', '=', siteId as number))
        .executeTakeFirst();
      return row?.next === null || row?.next === undefined ? undefined : decodeInstant(row.next);
    },
  };
}

function byDueThenId(a: DueWorkRecord, b: DueWorkRecord): number {
  return a.dueAt.getTime() - b.dueAt.getTime() || a.id - b.id;
}

function decodeDueWork(row: Selectable<DueWorkTable>): DueWorkRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    kind: row.kind as DueWorkKind,
    subjectId: decodeId(row.subject_id),
    dueAt: decodeInstant(row.due_at),
    uniqueKey: row.unique_key,
    payload: decodeJsonObject(row.payload),
    status: decodeStatus(row.status),
    claimedBy: row.claimed_by,
    leaseUntil: decodeNullableInstant(row.lease_until),
    attempts: decodeInteger(row.attempts),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

function decodeStatus(status: string): DueWorkRecord['status'] {
  switch (status) {
    case 'pending':
    case 'claimed':
    case 'done':
    case 'canceled':
      return status;
    default:
      throw new BillingError('storage', `Unknown due-work status ${status}.`);
  }
}

/** The row of new due work. */
function newDueWorkRow(work: NewDueWork, encode: RepositoryContext['encode']) {
  // NewDueWork carries no "now", and storage must not read the wall clock (the engine runs on a
  // manual clock in tests): like the memory adapter, the row is stamped with its due time.
  const stamp = encode.instant(work.dueAt);
  return {
    site_id: work.siteId,
    kind: work.kind,
    subject_id: work.subjectId,
    due_at: stamp,
    unique_key: work.uniqueKey,
    payload: encode.json(work.payload ?? {}),
    status: 'pending' as const,
    claimed_by: null,
    lease_until: null,
    attempts: 0,
    created_at: stamp,
    updated_at: stamp,
  };
}
