import { endOfLocalDay, parseLocalDate } from '../domain/time/local-day.js';
import { parseInstant } from '../domain/time/parse-instant.js';
import { ValidationCollector } from '../errors.js';
import type { OutboxEventRecord, OutboxFilter, SiteRecord, StorageTransaction } from '../ports/storage.js';
import type { CommandDeps } from './command-runner.js';
import { loadSite } from './site-lookup.js';
import { loadSubscription } from './subscription-service.js';

/**
 * The event keys of the service's events API (its Event Key list, which the official SDK's
 * `EventKey` enum copies). Only these are listed: the engine's own events (`site_update`, webhook
 * `test` messages, invoice and credit-note keys the service sends only as webhooks) are not the
 * service's events, and a client that validates keys against the list would reject the page.
 */
export const POLLABLE_EVENT_KEYS: readonly string[] = [
  'payment_success',
  'payment_failure',
  'signup_success',
  'signup_failure',
  'delayed_signup_creation_success',
  'delayed_signup_creation_failure',
  'billing_date_change',
  'expiration_date_change',
  'renewal_success',
  'renewal_failure',
  'subscription_state_change',
  'subscription_product_change',
  'pending_cancellation_change',
  'expiring_card',
  'customer_update',
  'customer_create',
  'customer_delete',
  'component_allocation_change',
  'metered_usage',
  'prepaid_usage',
  'upgrade_downgrade_success',
  'upgrade_downgrade_failure',
  'statement_closed',
  'statement_settled',
  'subscription_card_update',
  'subscription_group_card_update',
  'subscription_bank_account_update',
  'refund_success',
  'refund_failure',
  'upcoming_renewal_notice',
  'trial_end_notice',
  'dunning_step_reached',
  'invoice_issued',
  'prepaid_subscription_balance_changed',
  'subscription_group_signup_success',
  'subscription_group_signup_failure',
  'direct_debit_payment_paid_out',
  'direct_debit_payment_rejected',
  'direct_debit_payment_pending',
  'pending_payment_created',
  'pending_payment_failed',
  'pending_payment_completed',
  'proforma_invoice_issued',
  'subscription_prepayment_account_balance_changed',
  'subscription_service_credit_account_balance_changed',
  'custom_field_value_change',
  'item_price_point_changed',
  'renewal_success_recreated',
  'renewal_failure_recreated',
  'payment_success_recreated',
  'payment_failure_recreated',
  'subscription_deletion',
  'subscription_group_bank_account_update',
  'subscription_paypal_account_update',
  'subscription_group_paypal_account_update',
  'subscription_customer_change',
  'account_transaction_changed',
  'go_cardless_payment_paid_out',
  'go_cardless_payment_rejected',
  'go_cardless_payment_pending',
  'stripe_direct_debit_payment_paid_out',
  'stripe_direct_debit_payment_rejected',
  'stripe_direct_debit_payment_pending',
  'maxio_payments_direct_debit_payment_paid_out',
  'maxio_payments_direct_debit_payment_rejected',
  'maxio_payments_direct_debit_payment_pending',
  'invoice_in_collections_canceled',
  'subscription_added_to_group',
  'subscription_removed_from_group',
  'chargeback_opened',
  'chargeback_lost',
  'chargeback_accepted',
  'chargeback_closed',
  'chargeback_won',
  'payment_collection_method_changed',
  'component_billing_date_changed',
  'subscription_term_renewal_scheduled',
  'subscription_term_renewal_pending',
  'subscription_term_renewal_activated',
  'subscription_term_renewal_removed',
];

const POLLABLE: ReadonlySet<string> = new Set(POLLABLE_EVENT_KEYS);

/** The default and largest page size of event lists. */
const DEFAULT_PER_PAGE = 20;
const MAX_PER_PAGE = 200;

/**
 * An events query (`GET /events.json`, `/subscriptions/{id}/events.json`, `/events/count.json`),
 * values as text or numbers as a client sends them. `sinceId` and `maxId` are inclusive; dates are
 * local days in the site's zone (`endDate` inclusive), datetimes override them.
 */
export interface EventListInput {
  readonly page?: number | string;
  readonly perPage?: number | string;
  readonly sinceId?: number | string;
  readonly maxId?: number | string;
  /** `desc` (newest first, the default) or `asc`: pollers ask for `asc` from their last `since_id`. */
  readonly direction?: string;
  /** Event keys to keep; a key the engine never records matches nothing. */
  readonly filter?: readonly string[];
  /** Only `created_at`. */
  readonly dateField?: string;
  readonly startDate?: string;
  readonly endDate?: string;
  readonly startDatetime?: string;
  readonly endDatetime?: string;
}

/** An outbox event as the events API shows it, with the subscription and customer it is about. */
export interface EventView {
  readonly event: OutboxEventRecord;
  readonly subscriptionId: number | null;
  readonly customerId: number | null;
}

/** Polling the site's events: the outbox the engine writes with every change, read back. */
export class EventService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /** One page of the site's events matching `input`; bad input is a validation error. */
  list(subdomain: string, input: EventListInput = {}): Promise<EventView[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      return this.#page(tx, site, eventQuery(site, input), undefined);
    });
  }

  /** One page of the events about one subscription (`not_found` when it is not the site's). */
  listForSubscription(subdomain: string, subscriptionId: number, input: EventListInput = {}): Promise<EventView[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const subscription = await loadSubscription(tx, site.id, subscriptionId);
      const query = { ...eventQuery(site, input), subject: { type: 'subscription', id: subscription.id } };
      return this.#page(tx, site, query, subscription.customerId);
    });
  }

  /** How many of the site's events match `input`'s filters (paging is ignored, as the service does). */
  count(subdomain: string, input: EventListInput = {}): Promise<number> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      return tx.outbox.count(site.id, eventQuery(site, input).filter);
    });
  }

  async #page(
    tx: StorageTransaction,
    site: SiteRecord,
    query: ReturnType<typeof eventQuery> & { subject?: OutboxFilter['subject'] },
    knownCustomerId: number | undefined,
  ): Promise<EventView[]> {
    const filter: OutboxFilter = {
      ...query.filter,
      ...(query.subject === undefined ? {} : { subject: query.subject }),
    };
    const events = await tx.outbox.search(site.id, {
      ...filter,
      direction: query.direction,
      offset: (query.page - 1) * query.perPage,
      limit: query.perPage,
    });
    // A subscription's customer is read once per page, not once per event.
    const customers = new Map<number, number | null>();
    const customerOf = async (subscriptionId: number): Promise<number | null> => {
      if (knownCustomerId !== undefined) return knownCustomerId;
      if (!customers.has(subscriptionId)) {
        customers.set(subscriptionId, (await tx.subscriptions.findById(site.id, subscriptionId))?.customerId ?? null);
      }
      return customers.get(subscriptionId) ?? null;
    };
    const views: EventView[] = [];
    for (const event of events) {
      if (event.subjectType === 'subscription') {
        views.push({ event, subscriptionId: event.subjectId, customerId: await customerOf(event.subjectId) });
      } else if (event.subjectType === 'customer') {
        views.push({ event, subscriptionId: null, customerId: event.subjectId });
      } else {
        // Other subjects (payment attempts, invoices) name theirs in the payload when they have one.
        views.push({
          event,
          subscriptionId: idIn(event.payload.subscription_id),
          customerId: idIn(event.payload.customer_id),
        });
      }
    }
    return views;
  }
}

/** Reads and checks an events query against the site's zone; every problem is reported at once. */
function eventQuery(site: SiteRecord, input: EventListInput) {
  const errors = new ValidationCollector();
  const page = positiveInteger(input.page, 1, 'Page', errors);
  const perPage = Math.min(MAX_PER_PAGE, positiveInteger(input.perPage, DEFAULT_PER_PAGE, 'Per page', errors));
  const sinceId = input.sinceId === undefined ? undefined : positiveInteger(input.sinceId, 1, 'Since id', errors);
  const maxId = input.maxId === undefined ? undefined : positiveInteger(input.maxId, 1, 'Max id', errors);
  const direction = input.direction ?? 'desc';
  if (direction !== 'asc' && direction !== 'desc') errors.add('Direction: must be asc or desc.', 'direction');
  if (input.dateField !== undefined && input.dateField !== 'created_at')
    errors.add('Date field: must be created_at.', 'date_field');
  for (const key of input.filter ?? []) {
    if (!/^[a-z_]+$/.test(key)) errors.add(`Filter: '${key}' is not an event key.`, 'filter');
  }
  const from =
    input.startDatetime !== undefined
      ? errors.capture(() => parseInstant(input.startDatetime, site.timeZone, 'Start datetime'))
      : input.startDate !== undefined
        ? errors.capture(() => parseLocalDate(input.startDate, site.timeZone, 'Start date'))
        : undefined;
  const until =
    input.endDatetime !== undefined
      ? errors.capture(() => parseInstant(input.endDatetime, site.timeZone, 'End datetime'))
      : input.endDate !== undefined
        ? errors.capture(() => endOfLocalDay(parseLocalDate(input.endDate, site.timeZone, 'End date'), site.timeZone))
        : undefined;
  errors.throwIfAny();
  const keys =
    input.filter === undefined || input.filter.length === 0
      ? POLLABLE_EVENT_KEYS
      : input.filter.filter((key) => POLLABLE.has(key));
  const filter: OutboxFilter = {
    keys,
    ...(sinceId === undefined ? {} : { sinceId }),
    ...(maxId === undefined ? {} : { maxId }),
    ...(from === undefined ? {} : { occurredFrom: from }),
    ...(until === undefined ? {} : { occurredUntil: until }),
  };
  return { filter, page, perPage, direction: direction as 'asc' | 'desc' };
}

function positiveInteger(
  value: number | string | undefined,
  fallback: number,
  label: string,
  errors: ValidationCollector,
): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    errors.add(`${label}: must be a positive integer.`);
    return fallback;
  }
  return n;
}

function idIn(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}
