/** Notes on subscriptions, on SQL. */
import type { NoteRecord, NotesRepository } from 'billing-engine';
import type { Selectable, Updateable } from 'kysely';
import { decodeBoolean, decodeId, decodeInstant } from '../codecs.js';
import type { NotesTable } from '../schema.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the notes repository of one transaction. */
export function createNotesRepository({ db, encode }: RepositoryContext): NotesRepository {
  return {
    async insert(note) {
      const row = await db
        .insertInto('notes')
        .values({
          site_id: note.siteId,
          subscription_id: note.subscriptionId,
          body: note.body,
          sticky: encode.boolean(note.sticky),
          created_at: encode.instant(note.createdAt),
          updated_at: encode.instant(note.updatedAt),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeNote(row);
    },

    async findById(siteId, id) {
      const row = await db
        .selectFrom('notes')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && decodeNote(row);
    },

    async listForSubscription(siteId, subscriptionId) {
      const rows = await db
        .selectFrom('notes')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('subscription_id', '=', subscriptionId)
        .orderBy('id')
        .execute();
      return rows.map(decodeNote);
    },

    async update(siteId, id, patch) {
      const set: Updateable<NotesTable> = {};
      if (patch.body !== undefined) set.body = patch.body;
      if (patch.sticky !== undefined) set.sticky = encode.boolean(patch.sticky);
      if (patch.updatedAt !== undefined) set.updated_at = encode.instant(patch.updatedAt);
      if (Object.keys(set).length === 0) return this.findById(siteId, id);
      const row = await db
        .updateTable('notes')
        .set(set)
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && decodeNote(row);
    },

    async delete(siteId, id) {
      const result = await db.deleteFrom('notes').where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

function decodeNote(row: Selectable<NotesTable>): NoteRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    subscriptionId: decodeId(row.subscription_id),
    body: row.body,
    sticky: decodeBoolean(row.sticky),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}
