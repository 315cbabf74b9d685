import type { SubscriptionState } from '../ports/storage.js';
import type { EventListInput, EventView } from '../services/event-service.js';
import { pageQuery } from './list-query.js';
import { type WireContext, wireState, wireTimestamp } from './wire-context.js';

/** An event as the service writes it (inside `{"event":{...}}`, reference: the events API). */
export interface EventJson {
  readonly id: number;
  readonly key: string;
  readonly message: string;
  readonly subscription_id: number | null;
  readonly customer_id: number | null;
  readonly created_at: string | null;
  readonly event_specific_data: Readonly<Record<string, unknown>> | null;
}

function record(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function state(value: unknown, context: WireContext): string | undefined {
  return typeof value === 'string' ? wireState(value as SubscriptionState, context.compat) : undefined;
}

/**
 * The `event_specific_data` of the keys whose shape the engine's payload has in full; null for
 * the others, as the service sends for keys without specific data, since a partial object would
 * not match any of the shapes clients validate it against.
 */
function specificData(view: EventView, context: WireContext): Readonly<Record<string, unknown>> | null {
  const payload = view.event.payload;
  const subscription = record(payload.subscription);
  if (view.event.key === 'subscription_state_change') {
    const previous = state(subscription.previous_state, context);
    const next = state(subscription.state, context);
    return previous === undefined || next === undefined
      ? null
      : { previous_subscription_state: previous, new_subscription_state: next };
  }
  if (view.event.key === 'subscription_product_change') {
    const previous = record(payload.previous_product).id;
    const next = record(subscription.product).id;
    return typeof previous === 'number' && typeof next === 'number'
      ? { previous_product_id: previous, new_product_id: next }
      : null;
  }
  return null;
}

/** A one-line description of the event, as the service's Site Activity shows. */
function message(view: EventView, data: Readonly<Record<string, unknown>> | null): string {
  const about =
    view.subscriptionId !== null
      ? `subscription ${view.subscriptionId}`
      : view.customerId !== null
        ? `customer ${view.customerId}`
        : 'the site';
  const words = view.event.key.replaceAll('_', ' ');
  const text = `${words.charAt(0).toUpperCase()}${words.slice(1)} on ${about}`;
  if (view.event.key === 'subscription_state_change' && data !== null)
    return `${text}: ${String(data.previous_subscription_state)} to ${String(data.new_subscription_state)}`;
  const reason = view.event.payload.message;
  return typeof reason === 'string' && reason !== '' ? `${text}: ${reason}` : text;
}

/** The fields of an event, unwrapped. */
export function eventJson(view: EventView, context: WireContext): EventJson {
  const data = specificData(view, context);
  return {
    id: view.event.id,
    key: view.event.key,
    message: message(view, data),
    subscription_id: view.subscriptionId,
    customer_id: view.customerId,
    created_at: wireTimestamp(view.event.occurredAt, context),
    event_specific_data: data,
  };
}

/** `{"event":{...}}`, the item of an events list. */
export function serializeEvent(view: EventView, context: WireContext): { event: EventJson } {
  return { event: eventJson(view, context) };
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * Reads an events query from a parsed query string into the engine's {@link EventListInput}:
 * `page` and `per_page` (lenient, as on every list), `since_id`, `max_id`, `direction`, `filter` (`filter=a,b` as the official SDK
 * sends it, or `filter[]=a&filter[]=b`), `date_field`, `start_date`, `end_date`, `start_datetime`,
 * `end_datetime`. Values are passed on as text for the engine to check with its messages; values
 * that are not text at all (`direction[]=asc`) count as not given, as empty pairs do.
 */
export function eventListInput(query: Readonly<Record<string, unknown>>): EventListInput {
  const list = Array.isArray(query.filter) ? query.filter : typeof query.filter === 'string' ? [query.filter] : [];
  const filter = list
    .flatMap((item) => (typeof item === 'string' ? item.split(',') : []))
    .map(text)
    .filter((key): key is string => key !== undefined);
  // Paging is read leniently, as on every list: a bad value means the default.
  const page = pageQuery.parse(query);
  const fields = {
    sinceId: text(query.since_id),
    maxId: text(query.max_id),
    direction: text(query.direction)?.toLowerCase(),
    dateField: text(query.date_field),
    startDate: text(query.start_date),
    endDate: text(query.end_date),
    startDatetime: text(query.start_datetime),
    endDatetime: text(query.end_datetime),
  };
  const given = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  return { page: page.page, perPage: page.perPage, ...given, ...(filter.length === 0 ? {} : { filter }) };
}
