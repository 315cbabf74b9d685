/** Direct-post call records and replay claims on SQL. */
import { BillingError, type DirectCallRecord, type DirectCallsRepository } from 'billing-engine';
import type { Selectable } from 'kysely';
import { decodeBoolean, decodeId, decodeInstant, decodeJsonObject } from '../codecs.js';
import type { DirectCallsTable } from '../schema.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the direct-calls repository of one transaction. */
export function createDirectCallsRepository({ db, encode }: RepositoryContext): DirectCallsRepository {
  return {
    async insert(call) {
      const row = await db
        .insertInto('direct_calls')
        .values({
          site_id: call.siteId,
          id: call.id,
          api_id: call.apiId,
          nonce: call.nonce,
          timestamp: call.timestamp,
          success: encode.boolean(call.success),
          request: encode.json(call.request),
          response: encode.json(call.response),
          created_at: encode.instant(call.createdAt),
        })
        // A replayed call id is refused without failing the statement, so the transaction that
        // tried it can still record the refusal.
        .onConflict((oc) => oc.columns(['site_id', 'id']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) {
        throw new BillingError('conflict', 'Call id is already taken.', { data: { callId: call.id } });
      }
      return decodeCall(row);
    },

    async claimPost({ siteId, inputHash, nonceKey, at }) {
      const values = {
        site_id: siteId,
        input_hash: inputHash,
        nonce_key: nonceKey,
        created_at: encode.instant(at),
      };
      // One statement decides either way. On Postgres a concurrent claimer of the same hash or
      // nonce key waits for the first one's row and then sees its committed claim.
      const row =
        nonceKey === null
          ? // Unprotected: inserted, or the held claim is unprotected too (the no-op update returns it).
            await db
              .insertInto('direct_post_claims')
              .values(values)
              .onConflict((oc) =>
                oc
                  .columns(['site_id', 'input_hash'])
                  .doUpdateSet((eb) => ({ input_hash: eb.ref('excluded.input_hash') }))
                  .where('direct_post_claims.nonce_key', 'is', null),
              )
              .returning('input_hash')
              .executeTakeFirst()
          : // Protected: inserted only when neither the hash nor the nonce key is held.
            await db
              .insertInto('direct_post_claims')
              .values(values)
              .onConflict((oc) => oc.doNothing())
              .returning('input_hash')
              .executeTakeFirst();
      return row !== undefined;
    },

    async findById(siteId, id) {
      const row = await db
        .selectFrom('direct_calls')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && decodeCall(row);
    },
  };
}

function decodeCall(row: Selectable<DirectCallsTable>): DirectCallRecord {
  return {
    id: row.id,
    siteId: decodeId(row.site_id),
    apiId: row.api_id,
    nonce: row.nonce,
    timestamp: row.timestamp,
    success: decodeBoolean(row.success),
    request: decodeJsonObject(row.request),
    response: decodeJsonObject(row.response),
    createdAt: decodeInstant(row.created_at),
  };
}
