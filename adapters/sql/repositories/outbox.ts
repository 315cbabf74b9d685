/** The transactional outbox on SQL. */
import type { OutboxEventRecord, OutboxFilter, OutboxRepository } from 'billing-engine';
import type { Kysely, Selectable } from 'kysely';
import { decodeId, decodeInstant, decodeJsonObject } from '../codecs.js';
import type { Database, OutboxEventsTable } from '../schema.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the outbox repository of one transaction. */
export function createOutboxRepository({ db, encode, hooks }: RepositoryContext): OutboxRepository {
  return {
    async append(events) {
      if (events.length === 0) return [];
      await hooks.lockOutbox(db, [...new Set(events.map((event) => event.siteId))]);
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
