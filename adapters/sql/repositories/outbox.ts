/** The transactional outbox on SQL. */
import type { OutboxEventRecord, OutboxRepository } from 'billing-engine';
import type { Selectable } from 'kysely';
import { decodeId, decodeInstant, decodeJsonObject } from '../codecs.js';
import type { OutboxEventsTable } from '../schema.js';
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
  };
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
