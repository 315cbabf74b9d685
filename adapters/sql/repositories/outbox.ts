/**
 * The transactional outbox on SQL.
 *
 * A site's event ids must become visible in increasing order to a reader paging with `listAfter`,
 * although ids are taken at insert and transactions commit in any order. On Postgres every
 * appending transaction holds the site's outbox advisory lock in SHARED mode from before its
 * insert until it ends, so appenders never wait on each other (a per-site exclusive lock
 * serialised every settling transaction of a site, issue 18); a paging reader takes the same lock
 * in EXCLUSIVE mode, which waits until every transaction that already took an id has ended and
 * keeps new appenders out until the reader's own transaction ends. Its query then sees every id
 * below the newest one, so no id can be committed later behind its cursor. SQLite has one writer
 * at a time and needs neither.
 */
import type { OutboxEventRecord, OutboxFilter, OutboxRepository } from 'billing-engine';
import { type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import { decodeId, decodeInstant, decodeJsonObject } from '../codecs.js';
import type { Database, OutboxEventsTable } from '../schema.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the outbox repository of one transaction. */
export function createOutboxRepository({ db, encode, hooks }: RepositoryContext): OutboxRepository {
  /** On Postgres, waits until every append of the site that took an id has ended (see the file comment). */
  const awaitAppenders = async (siteId: number): Promise<void> => {
    if (hooks.name === 'postgres') await sql`select pg_advisory_xact_lock(${outboxLockKey(siteId)})`.execute(db);
  };
  // Sites whose outbox lock this transaction holds already: it lasts until the transaction ends,
  // so a second append (document events, then the command's) need not take it again.
  const locked = new Set<number>();
  return {
    async append(events) {
      if (events.length === 0) return [];
      const sites = [...new Set(events.map((event) => event.siteId))].filter((siteId) => !locked.has(siteId));
      if (sites.length > 0) await hooks.lockOutbox(db, sites);
      for (const siteId of sites) locked.add(siteId);
      const rows = await db
        .insertInto('outbox_events')
        .values(
          events.map((event) => ({
            site_id: event.siteId,
            key: event.key,
            subject_type: event.subjectType,
            subject_id: event.subjectId,
            payload: encode.json(event.payload),
            occurred_at: encode.instant(event.occurredAt),
          })),
        )
        .returningAll()
        .execute();
      // A multi-row VALUES list takes its ids in list order; RETURNING has no defined order, so
      // sorting by id restores the order of `events`.
      return rows.map(decodeEvent).sort((a, b) => a.id - b.id);
    },

    async listAfter(siteId, afterId, limit) {
      if (limit <= 0) return [];
      await awaitAppenders(siteId);
      const rows = await db
        .selectFrom('outbox_events')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(decodeEvent);
    },

    async findById(siteId, id) {
      const row = await db
        .selectFrom('outbox_events')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && decodeEvent(row);
    },

    async search(siteId, query) {
      if (query.limit <= 0) return [];
      // The events API pages by `since_id` as `listAfter` does.
      if (query.sinceId !== undefined) await awaitAppenders(siteId);
      const rows = await filtered(db, siteId, query, encode.instant)
        .selectAll()
        .orderBy('id', query.direction)
        .limit(query.limit)
        .offset(Math.max(0, query.offset))
        .execute();
      return rows.map(decodeEvent);
    },

    async count(siteId, filter) {
      const row = await filtered(db, siteId, filter, encode.instant)
        .select((eb) => eb.fn.countAll().as('count'))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },
  };
}

/**
 * The Postgres advisory lock key of a site's outbox, per schema so that engines in other schemas of
 * one database never wait on each other. Appenders take it shared, paging readers exclusive.
 */
export function outboxLockKey(siteId: number): RawBuilder<unknown> {
  return sql`hashtextextended(${`billing-engine:outbox:${siteId}:`} || coalesce(current_schema(), ''), 0)`;
}

/** The site's outbox rows that match `filter`, as a query to select from. */
function filtered(db: Kysely<Database>, siteId: number, filter: OutboxFilter, instant: (at: Date) => Date | number) {
  let query = db.selectFrom('outbox_events').where('site_id', '=', siteId);
  if (filter.sinceId !== undefined) query = query.where('id', '>=', filter.sinceId);
  if (filter.maxId !== undefined) query = query.where('id', '<=', filter.maxId);
  if (filter.keys !== undefined) {
    // An empty IN list is not valid SQL everywhere; no keys means no rows.
    query = filter.keys.length === 0 ? query.where('id', '<', 0) : query.where('key', 'in', [...filter.keys]);
  }
  if (filter.subject !== undefined) {
    query = query.where('subject_type', '=', filter.subject.type).where('subject_id', '=', filter.subject.id);
  }
  if (filter.occurredFrom !== undefined) query = query.where('occurred_at', '>=', instant(filter.occurredFrom));
  if (filter.occurredUntil !== undefined) query = query.where('occurred_at', '<=', instant(filter.occurredUntil));
  return query;
}

function decodeEvent(row: Selectable<OutboxEventsTable>): OutboxEventRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    key: row.key,
    subjectType: row.subject_type,
    subjectId: decodeId(row.subject_id),
    payload: decodeJsonObject(row.payload),
    occurredAt: decodeInstant(row.occurred_at),
  };
}
