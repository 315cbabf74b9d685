import { z } from 'zod';
import type { WebhookStatus } from '../ports/storage.js';
import type { WebhookEndpointInput, WebhookListQuery } from '../services/webhook-service.js';
import { isGiven } from './subscription-request.js';
import { defineWireRequest, isPlainObject, parseWireParams } from './wire-request.js';
import { wireId, wireText } from './wire-scalars.js';

const subscriptionsList = z.array(wireText, { error: 'must be a list of event names.' });

/**
 * The fields of `{"endpoint":{url, webhook_subscriptions}}` on create.
 * A missing field is handed on blank so that the engine reports it with its own message ("Url:
 * cannot be blank.", "Webhook subscriptions: cannot be blank."), as it checks the URL rules and
 * event names.
 */
export const endpointFields = z
  .object(
    { url: wireText.nullish(), webhook_subscriptions: subscriptionsList.nullish() },
    { error: 'must be an object.' },
  )
  .transform((e): WebhookEndpointInput => ({ url: e.url ?? '', webhookSubscriptions: e.webhook_subscriptions ?? [] }));

/** `POST /endpoints.json`: body `{"endpoint":{url, webhook_subscriptions}}`. */
export const endpointRequest = defineWireRequest('endpoint', endpointFields);

/** The fields of `{"endpoint":{...}}` on update: only the fields sent change. */
export const endpointUpdateFields = z
  .object(
    { url: wireText.nullish(), webhook_subscriptions: subscriptionsList.nullish() },
    { error: 'must be an object.' },
  )
  .transform(
    (e): Partial<WebhookEndpointInput> => ({
      ...(e.url == null ? {} : { url: e.url }),
      ...(e.webhook_subscriptions == null ? {} : { webhookSubscriptions: e.webhook_subscriptions }),
    }),
  );

/** `PUT /endpoints/{id}.json`: body `{"endpoint":{url?, webhook_subscriptions?}}`. */
export const endpointUpdateRequest = defineWireRequest('endpoint', endpointUpdateFields);

const replayParams = z.object(
  { ids: z.array(wireId, { error: 'must be a list of webhook ids.' }).nullish() },
  { error: 'must be an object.' },
);

/**
 * The webhook ids of `POST /webhooks/replay.json` (`{"ids":[...]}`), numbers or
 * strings of digits. A missing list is handed on empty for the engine's "Ids: cannot be blank.".
 */
export function replayIdsOf(body: unknown): number[] {
  return parseWireParams(replayParams, isPlainObject(body) ? body : {}, 'body').ids ?? [];
}

function queryText(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

// Paging is read leniently, as on every list: a bad value means the default.
function queryInteger(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

/**
 * Reads `GET /webhooks.json?status&since_date&until_date&page&per_page&order&subscription`
 * into a {@link WebhookListQuery}; the engine checks the status and dates with its
 * messages. The engine lists newest first only and cannot filter by subscription, so
 * `order=oldest_first` and `subscription` are refused (422) rather than answered with a list that
 * is not what was asked.
 */
export const webhookListQuery = z
  .object({
    status: z.unknown().optional(),
    since_date: z.unknown().optional(),
    until_date: z.unknown().optional(),
    page: z.unknown().optional(),
    per_page: z.unknown().optional(),
    order: z.unknown().optional(),
    subscription: z.unknown().optional(),
  })
  .superRefine((q, ctx) => {
    const order = queryText(q.order);
    if (order !== undefined && order !== 'newest_first') {
      ctx.addIssue({
        code: 'custom',
        path: ['order'],
        message: "must be 'newest_first'; other orders are not supported by this server yet.",
      });
    }
    if (isGiven(q.subscription)) {
      ctx.addIssue({
        code: 'custom',
        path: ['subscription'],
        message: 'filtering webhooks by subscription is not supported by this server yet.',
      });
    }
  })
  .transform((q): WebhookListQuery => {
    const status = queryText(q.status);
    const sinceDate = queryText(q.since_date);
    const untilDate = queryText(q.until_date);
    const page = queryInteger(q.page);
    const perPage = queryInteger(q.per_page);
    return {
      // The engine refuses a status outside its list with its own message.
      ...(status === undefined ? {} : { status: status as WebhookStatus }),
      ...(sinceDate === undefined ? {} : { sinceDate }),
      ...(untilDate === undefined ? {} : { untilDate }),
      ...(page === undefined ? {} : { page }),
      ...(perPage === undefined ? {} : { perPage }),
    };
  });
