/** Insert-if-absent claims on SQL, one upsert statement per claim. */
import type { IdempotencyRepository } from 'billing-engine';
import type { RepositoryContext } from './repository-context.js';

/** Builds the idempotency repository of one transaction. */
export function createIdempotencyRepository({ db, encode }: RepositoryContext): IdempotencyRepository {
  return {
    async claim(siteId, scope, key, now, expiresAt) {
      // One statement decides: the insert wins when the key is absent, the conditional update wins
      // when the held claim has expired, and otherwise no row comes back. On Postgres a concurrent
      // claimer of the same key waits for the first one's row and then sees its committed claim,
      // so of N concurrent claims exactly one returns a row.
      const row = await db
        .insertInto('idempotency_keys')
        .values({
          site_id: siteId,
          scope,
          key,
          claimed_at: encode.instant(now),
          expires_at: encode.nullableInstant(expiresAt),
        })
        .onConflict((oc) =>
          oc
            .columns(['site_id', 'scope', 'key'])
            .doUpdateSet((eb) => ({
              claimed_at: eb.ref('excluded.claimed_at'),
              expires_at: eb.ref('excluded.expires_at'),
            }))
            .where('idempotency_keys.expires_at', 'is not', null)
            .where('idempotency_keys.expires_at', '<=', encode.instant(now)),
        )
        .returning('key')
        .executeTakeFirst();
      return row !== undefined;
    },
    async release(siteId, scope, key) {
      const result = await db
        .deleteFrom('idempotency_keys')
        .where('site_id', '=', siteId)
        .where('scope', '=', scope)
        .where('key', '=', key)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
