/** Webhook endpoints and webhooks on SQL. */
import {
  BillingError,
  type WebhookEndpointRecord,
  type WebhookEndpointStatus,
  type WebhookRecord,
  type WebhookStatus,
  type WebhooksRepository,
} from 'billing-engine';
import { type Selectable, sql, type Updateable } from 'kysely';
import { decodeId, decodeInstant, decodeInteger, decodeJsonStringArray, decodeNullableInstant } from '../codecs.js';
import type { WebhookEndpointsTable, WebhooksTable } from '../schema.js';
import { ReadCache } from './read-cache.js';
import type { RepositoryContext } from './repository-context.js';

/**
 * Builds the webhooks repository of one transaction. Every command's events are fanned out to
 * the site's endpoints, so the endpoint list is cached for the transaction (a batched one runs
 * many commands); every endpoint write here clears it (see {@link ReadCache}).
 */
export function createWebhooksRepository({ db, encode }: RepositoryContext): WebhooksRepository {
  const endpointLists = new ReadCache<WebhookEndpointRecord[]>();
  const findEndpoint = async (siteId: number, id: number) => {
    const row = await db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('site_id', '=', siteId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && decodeEndpoint(row);
  };
  const findWebhook = async (siteId: number, id: number) => {
    const row = await db
      .selectFrom('webhooks')
      .selectAll()
      .where('site_id', '=', siteId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && decodeWebhook(row);
  };

  return {
    async insertEndpoint(endpoint) {
      endpointLists.clear();
      const row = await db
        .insertInto('webhook_endpoints')
        .values({
          site_id: endpoint.siteId,
          url: endpoint.url,
          events: encode.json(endpoint.events),
          status: endpoint.status,
          failure_count: endpoint.failureCount,
          created_at: encode.instant(endpoint.createdAt),
          updated_at: encode.instant(endpoint.updatedAt),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeEndpoint(row);
    },

    findEndpoint,

    async listEndpoints(siteId) {
      const cached = await endpointLists.get(String(siteId), async () => {
        const rows = await db
          .selectFrom('webhook_endpoints')
          .selectAll()
          .where('site_id', '=', siteId)
          .orderBy('id')
          .execute();
        return rows.map(decodeEndpoint);
      });
      return cached ?? [];
    },

    async updateEndpoint(siteId, id, patch) {
      endpointLists.clear();
      const set: Updateable<WebhookEndpointsTable> = {};
      if (patch.url !== undefined) set.url = patch.url;
      if (patch.events !== undefined) set.events = encode.json(patch.events);
      if (patch.status !== undefined) set.status = patch.status;
      if (patch.failureCount !== undefined) set.failure_count = patch.failureCount;
      if (patch.updatedAt !== undefined) set.updated_at = encode.instant(patch.updatedAt);
      if (Object.keys(set).length === 0) return findEndpoint(siteId, id);
      const row = await db
        .updateTable('webhook_endpoints')
        .set(set)
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && decodeEndpoint(row);
    },

    async deleteEndpoint(siteId, id) {
      endpointLists.clear();
      // Its webhooks go with it through their ON DELETE CASCADE reference.
      const result = await db
        .deleteFrom('webhook_endpoints')
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async countFailure(siteId, id, now) {
      endpointLists.clear();
      // Incremented in the UPDATE itself, so concurrent failed deliveries never lose a count.
      const row = await db
        .updateTable('webhook_endpoints')
        .set({ failure_count: sql<number>`failure_count + 1`, updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && decodeEndpoint(row);
    },

    async insertWebhook(webhook) {
      const row = await db
        .insertInto('webhooks')
        .values({
          site_id: webhook.siteId,
          endpoint_id: webhook.endpointId,
          event_id: webhook.eventId,
          event_key: webhook.eventKey,
          body: webhook.body,
          status: webhook.status,
          attempts: webhook.attempts,
          last_sent_at: encode.nullableInstant(webhook.lastSentAt),
          last_sent_url: webhook.lastSentUrl,
          last_error: webhook.lastError,
          last_error_at: encode.nullableInstant(webhook.lastErrorAt),
          accepted_at: encode.nullableInstant(webhook.acceptedAt),
          created_at: encode.instant(webhook.createdAt),
          updated_at: encode.instant(webhook.updatedAt),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeWebhook(row);
    },

    findWebhook,

    async updateWebhook(siteId, id, patch) {
      const set: Updateable<WebhooksTable> = {};
      if (patch.body !== undefined) set.body = patch.body;
      if (patch.status !== undefined) set.status = patch.status;
      if (patch.attempts !== undefined) set.attempts = patch.attempts;
      if (patch.lastSentAt !== undefined) set.last_sent_at = encode.nullableInstant(patch.lastSentAt);
      if (patch.lastSentUrl !== undefined) set.last_sent_url = patch.lastSentUrl;
      if (patch.lastError !== undefined) set.last_error = patch.lastError;
      if (patch.lastErrorAt !== undefined) set.last_error_at = encode.nullableInstant(patch.lastErrorAt);
      if (patch.acceptedAt !== undefined) set.accepted_at = encode.nullableInstant(patch.acceptedAt);
      if (patch.updatedAt !== undefined) set.updated_at = encode.instant(patch.updatedAt);
      if (Object.keys(set).length === 0) return findWebhook(siteId, id);
      const row = await db
        .updateTable('webhooks')
        .set(set)
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && decodeWebhook(row);
    },

    async listWebhooks(siteId, filter, page) {
      const rows = await db
        .selectFrom('webhooks')
        .selectAll()
        .where('site_id', '=', siteId)
        .$if(filter.status !== undefined, (qb) => qb.where('status', '=', filter.status as WebhookStatus))
        .$if(filter.endpointId !== undefined, (qb) => qb.where('endpoint_id', '=', filter.endpointId as number))
        .$if(filter.since !== undefined, (qb) => qb.where('created_at', '>=', encode.instant(filter.since as Date)))
        .$if(filter.until !== undefined, (qb) => qb.where('created_at', '<=', encode.instant(filter.until as Date)))
        .orderBy('id', 'desc')
        .limit(Math.max(0, page.perPage))
        .offset(Math.max(0, (page.page - 1) * page.perPage))
        .execute();
      return rows.map(decodeWebhook);
    },
  };
}

function decodeEndpointStatus(value: string): WebhookEndpointStatus {
  if (value === 'enabled' || value === 'paused' || value === 'disabled') return value;
  throw new BillingError('storage', `Unknown webhook endpoint status ${value}.`);
}

function decodeWebhookStatus(value: string): WebhookStatus {
  if (value === 'pending' || value === 'successful' || value === 'failed') return value;
  throw new BillingError('storage', `Unknown webhook status ${value}.`);
}

function decodeEndpoint(row: Selectable<WebhookEndpointsTable>): WebhookEndpointRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    url: row.url,
    events: decodeJsonStringArray(row.events),
    status: decodeEndpointStatus(row.status),
    failureCount: decodeInteger(row.failure_count),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

function decodeWebhook(row: Selectable<WebhooksTable>): WebhookRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    endpointId: decodeId(row.endpoint_id),
    eventId: row.event_id === null ? null : decodeId(row.event_id),
    eventKey: row.event_key,
    body: row.body,
    status: decodeWebhookStatus(row.status),
    attempts: decodeInteger(row.attempts),
    lastSentAt: decodeNullableInstant(row.last_sent_at),
    lastSentUrl: row.last_sent_url,
    lastError: row.last_error,
    lastErrorAt: decodeNullableInstant(row.last_error_at),
    acceptedAt: decodeNullableInstant(row.accepted_at),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}
