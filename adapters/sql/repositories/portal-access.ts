/** Customers' billing-portal access on SQL. */
import type { PortalAccessRecord, PortalAccessRepository } from 'billing-engine';
import type { Selectable } from 'kysely';
import { decodeBoolean, decodeId, decodeInstant, decodeNullableInstant } from '../codecs.js';
import type { PortalAccessTable } from '../schema-portal-access.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the portal access repository of one transaction. */
export function createPortalAccessRepository(context: RepositoryContext): PortalAccessRepository {
  const { db, encode } = context;
  return {
    async find(siteId, customerId) {
      const row = await db
        .selectFrom('portal_access')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('customer_id', '=', customerId)
        .executeTakeFirst();
      return row && decodePortalAccess(row);
    },

    async save(record) {
      const changes = {
        enabled: encode.boolean(record.enabled),
        invite_last_sent_at: encode.nullableInstant(record.inviteLastSentAt),
        invite_last_accepted_at: encode.nullableInstant(record.inviteLastAcceptedAt),
        revoked_at: encode.nullableInstant(record.revokedAt),
        updated_at: encode.instant(record.updatedAt),
      };
      const row = await db
        .insertInto('portal_access')
        .values({
          site_id: record.siteId,
          customer_id: record.customerId,
          created_at: encode.instant(record.createdAt),
          ...changes,
        })
        .onConflict((oc) => oc.columns(['site_id', 'customer_id']).doUpdateSet(changes))
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodePortalAccess(row);
    },
  };
}

function decodePortalAccess(row: Selectable<PortalAccessTable>): PortalAccessRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    customerId: decodeId(row.customer_id),
    enabled: decodeBoolean(row.enabled),
    createdAt: decodeInstant(row.created_at),
    inviteLastSentAt: decodeNullableInstant(row.invite_last_sent_at),
    inviteLastAcceptedAt: decodeNullableInstant(row.invite_last_accepted_at),
    revokedAt: decodeNullableInstant(row.revoked_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}
