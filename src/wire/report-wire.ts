/** Wire shapes of site statistics, MRR and site-wide lists. */
import { toMajorString } from '../domain/money/index.js';
import { formatInstant } from '../domain/time/index.js';
import { invalid } from '../errors.js';
import type {
  MetadataRecord,
  MrrMovementLineItem,
  MrrMovementRecord,
  ReportDirection,
  SubscriptionComponentReportRow,
} from '../ports/storage.js';
import type {
  CountedReportPage,
  MetadataListInput,
  MrrInput,
  MrrListInput,
  MrrMovementListInput,
  ReportPage,
  SiteMrr,
  SiteStatistics,
  SubscriptionComponentListInput,
  SubscriptionMrr,
} from '../services/report-service.js';
import { type ListPage, pageQuery } from './list-query.js';
import { type SubscriptionComponentJson, serializeSubscriptionComponent } from './serialize-allocation.js';
import { type MetadataJson, metadataJson } from './serialize-metafield.js';
import type { WireContext } from './wire-context.js';

/**
 * The symbol the currency is written with in English (`$`, `€`, `£`; the code itself where
 * the locale data has no symbol), as the service's formatted amounts and `currency_symbol` show it.
 */
export function currencySymbol(currency: string): string {
  try {
    const parts = new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency,
      currencyDisplay: 'narrowSymbol',
    }).formatToParts(0);
    return parts.find((p) => p.type === 'currency')?.value ?? currency;
  } catch {
    return currency;
  }
}

/**
 * An amount in minor units as the service's dashboard writes it: the currency symbol, then the
 * major-unit amount with thousands separated by commas (`$1,234.50`; `-$5.00` for a negative).
 * Built from the integer's digits, never from a float.
 */
export function formatMoney(minor: number, currency: string): string {
  const major = toMajorString(minor, currency);
  const negative = major.startsWith('-');
  const [whole = '0', fraction] = (negative ? major.slice(1) : major).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${currencySymbol(currency)}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** The `stats` object of `GET /stats.json` (the SDK's `SiteStatistics`); money as formatted strings. */
export interface SiteStatisticsJson {
  readonly total_subscriptions: number;
  readonly subscriptions_today: number;
  readonly total_revenue: string;
  readonly revenue_today: string;
  readonly revenue_this_month: string;
  readonly revenue_this_year: string;
  readonly total_canceled_subscriptions: number;
  readonly total_active_subscriptions: number;
  readonly total_past_due_subscriptions: number;
  readonly total_unpaid_subscriptions: number;
  readonly total_dunning_subscriptions: number;
}

/** The body of `GET /stats.json` (the SDK's `SiteSummary`): unwrapped, with the site's identity. */
export interface SiteSummaryJson {
  /** The engine keeps one name per site; it is both the seller's and the site's. */
  readonly seller_name: string;
  readonly site_name: string;
  readonly site_id: number;
  readonly site_currency: string;
  readonly stats: SiteStatisticsJson;
}

/** `GET /stats.json`. */
export function serializeSiteStatistics(stats: SiteStatistics): SiteSummaryJson {
  const money = (minor: number) => formatMoney(minor, stats.site.currency);
  return {
    seller_name: stats.site.name,
    site_name: stats.site.name,
    site_id: stats.site.id,
    site_currency: stats.site.currency,
    stats: {
      total_subscriptions: stats.totalSubscriptions,
      subscriptions_today: stats.subscriptionsToday,
      total_revenue: money(stats.totalRevenueInCents),
      revenue_today: money(stats.revenueTodayInCents),
      revenue_this_month: money(stats.revenueThisMonthInCents),
      revenue_this_year: money(stats.revenueThisYearInCents),
      total_canceled_subscriptions: stats.totalCanceledSubscriptions,
      total_active_subscriptions: stats.totalActiveSubscriptions,
      total_past_due_subscriptions: stats.totalPastDueSubscriptions,
      total_unpaid_subscriptions: stats.totalUnpaidSubscriptions,
      total_dunning_subscriptions: stats.totalDunningSubscriptions,
    },
  };
}

/** `{"mrr":{...}}` of `GET /mrr.json` (the SDK's `MRR` with its plan and usage `Breakouts`). */
export interface MrrJson {
  readonly mrr: {
    readonly amount_in_cents: number;
    readonly amount_formatted: string;
    readonly currency: string;
    readonly currency_symbol: string;
    readonly breakouts: {
      readonly plan_amount_in_cents: number;
      readonly plan_amount_formatted: string;
      readonly usage_amount_in_cents: number;
      readonly usage_amount_formatted: string;
    };
    readonly at_time: string;
  };
}

/** `GET /mrr.json`; `at_time` is the engine's clock when the figure was computed, in the site's zone. */
export function serializeMrr(mrr: SiteMrr): MrrJson {
  const { currency, timeZone } = mrr.site;
  return {
    mrr: {
      amount_in_cents: mrr.amountInCents,
      amount_formatted: formatMoney(mrr.amountInCents, currency),
      currency,
      currency_symbol: currencySymbol(currency),
      breakouts: {
        plan_amount_in_cents: mrr.planAmountInCents,
        plan_amount_formatted: formatMoney(mrr.planAmountInCents, currency),
        usage_amount_in_cents: mrr.usageAmountInCents,
        usage_amount_formatted: formatMoney(mrr.usageAmountInCents, currency),
      },
      at_time: formatInstant(mrr.at, timeZone),
    },
  };
}

/** An item of `GET /subscriptions_mrr.json` (the SDK's `SubscriptionMRR`). */
export interface SubscriptionMrrJson {
  readonly subscription_id: number;
  readonly mrr_amount_in_cents: number;
  readonly breakouts: { readonly plan_amount_in_cents: number; readonly usage_amount_in_cents: number };
}

/** `{"subscriptions_mrr":[...]}`: one page, as the service answers it (no counts in the body). */
export function serializeSubscriptionMrrList(page: ReportPage<SubscriptionMrr>): {
  subscriptions_mrr: SubscriptionMrrJson[];
} {
  return {
    subscriptions_mrr: page.items.map((m) => ({
      subscription_id: m.subscriptionId,
      mrr_amount_in_cents: m.amountInCents,
      breakouts: { plan_amount_in_cents: m.planAmountInCents, usage_amount_in_cents: m.usageAmountInCents },
    })),
  };
}

/** A line of a movement (the SDK's `MovementLineItem`); `price_point_id` is 0 when unknown, as the service writes it. */
export interface MovementLineItemJson {
  readonly product_id: number;
  readonly component_id: number;
  readonly price_point_id: number;
  readonly name: string;
  readonly mrr: number;
  readonly mrr_movements: {
    readonly amount: number;
    readonly category: string;
    readonly subscriber_delta: number;
    readonly lead_delta: number;
  }[];
  readonly quantity: number;
  readonly prev_quantity: number;
  readonly recurring: boolean;
}

/** One movement (the SDK's `Movement`). */
export interface MovementJson {
  readonly timestamp: string;
  readonly amount_in_cents: number;
  readonly amount_formatted: string;
  readonly description: string;
  readonly category: string;
  readonly breakouts: {
    readonly plan_amount_in_cents: number;
    readonly plan_amount_formatted: string;
    readonly usage_amount_in_cents: number;
    readonly usage_amount_formatted: string;
  };
  readonly line_items: MovementLineItemJson[];
  readonly subscription_id: number;
  readonly subscriber_name: string;
}

/** `{"mrr":{...}}` of `GET /mrr_movements.json` (the SDK's `ListMRRResponse`). */
export interface MrrMovementsJson {
  readonly mrr: {
    readonly page: number;
    readonly per_page: number;
    readonly total_pages: number;
    readonly total_entries: number;
    readonly currency: string;
    readonly currency_symbol: string;
    readonly movements: MovementJson[];
  };
}

/** A movement's words, as the service's MRR report writes them (amounts a month). */
function movementDescription(movement: MrrMovementRecord, currency: string): string {
  const who = movement.subscriberName === '' ? `Subscription ${movement.subscriptionId}` : movement.subscriberName;
  const product = movement.lineItems.find((line) => line.componentId === 0)?.name ?? 'its product';
  const month = (minor: number) => `${formatMoney(minor, currency)}/mo`;
  const before = movement.mrrInCents - movement.amountInCents;
  switch (movement.category) {
    case 'new_business':
      return `${who} signed up for ${product} (${month(movement.mrrInCents)})`;
    case 'reactivation':
      return `${who} reactivated ${product} (${month(movement.mrrInCents)})`;
    case 'churn':
      return `${who} churned from ${product} (${month(before)})`;
    case 'expansion':
      return `${who} expanded from ${month(before)} to ${month(movement.mrrInCents)}`;
    case 'contraction':
      return `${who} contracted from ${month(before)} to ${month(movement.mrrInCents)}`;
    case 'baseline':
      // Never listed (the repository leaves baselines out); named for completeness.
      return `${who} on ${product} when the history started (${month(movement.mrrInCents)})`;
  }
}

function lineItemJson(line: MrrMovementLineItem, movement: MrrMovementRecord): MovementLineItemJson {
  const whole = movement.category === 'new_business' || movement.category === 'reactivation' ? 1 : 0;
  const subscriberDelta = line.componentId !== 0 ? 0 : movement.category === 'churn' ? -1 : whole;
  const category =
    movement.category === 'expansion' || movement.category === 'contraction'
      ? line.movementInCents > 0
        ? 'expansion'
        : 'contraction'
      : movement.category;
  return {
    product_id: line.productId,
    component_id: line.componentId,
    price_point_id: line.pricePointId ?? 0,
    name: line.name,
    mrr: line.mrrInCents,
    mrr_movements:
      line.movementInCents === 0 && subscriberDelta === 0
        ? []
        : [{ amount: line.movementInCents, category, subscriber_delta: subscriberDelta, lead_delta: 0 }],
    quantity: line.quantity,
    prev_quantity: line.prevQuantity,
    recurring: line.recurring,
  };
}

/**
 * `GET /mrr_movements.json`: one page with the counts of the whole list. `timestamp` is the
 * command's instant in the site's zone; each line's `mrr_movements` holds its own change (none
 * when the line did not move), with `subscriber_delta` 1 on the product line of a new business or
 * reactivation and -1 on a churn's.
 */
export function serializeMrrMovements(page: CountedReportPage<MrrMovementRecord>): MrrMovementsJson {
  const { currency, timeZone } = page.site;
  return {
    mrr: {
      page: page.page,
      per_page: page.perPage,
      total_pages: Math.ceil(page.totalCount / page.perPage),
      total_entries: page.totalCount,
      currency,
      currency_symbol: currencySymbol(currency),
      movements: page.items.map((m) => ({
        timestamp: formatInstant(m.occurredAt, timeZone),
        amount_in_cents: m.amountInCents,
        amount_formatted: formatMoney(m.amountInCents, currency),
        description: movementDescription(m, currency),
        category: m.category,
        breakouts: {
          plan_amount_in_cents: m.planAmountInCents,
          plan_amount_formatted: formatMoney(m.planAmountInCents, currency),
          usage_amount_in_cents: m.usageAmountInCents,
          usage_amount_formatted: formatMoney(m.usageAmountInCents, currency),
        },
        line_items: m.lineItems.map((line) => lineItemJson(line, m)),
        subscription_id: m.subscriptionId,
        subscriber_name: m.subscriberName,
      })),
    },
  };
}

/** `GET /{resource_type}/metadata.json` (the SDK's `PaginatedMetadata`): counts of the whole list and one page. */
export interface MetadataPageJson {
  readonly total_count: number;
  readonly current_page: number;
  readonly total_pages: number;
  readonly per_page: number;
  readonly metadata: MetadataJson[];
}

/** The site-wide metadata list body. */
export function serializeMetadataPage(page: CountedReportPage<MetadataRecord>): MetadataPageJson {
  return {
    total_count: page.totalCount,
    current_page: page.page,
    total_pages: Math.ceil(page.totalCount / page.perPage),
    per_page: page.perPage,
    metadata: page.items.map(metadataJson),
  };
}

/**
 * `{"subscriptions_components":[...]}` (the SDK's `ListSubscriptionComponentsResponse`): each item
 * is the subscription component unwrapped, the same fields as `GET /subscriptions/{id}/components.json`.
 */
export function serializeSiteSubscriptionComponents(
  page: ReportPage<SubscriptionComponentReportRow>,
  context: WireContext,
): { subscriptions_components: SubscriptionComponentJson[] } {
  return {
    subscriptions_components: page.items.map((row) => serializeSubscriptionComponent(row, context).component),
  };
}

// ---- Query parsing: the official SDK's spellings into the service's inputs. ----

type Query = Readonly<Record<string, unknown>>;

function text(query: Query, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`${name}: must be a single value.`, name);
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/**
 * A list of ids as the SDK sends one: comma-separated (`subscription_ids=1,2,3`) or repeated with
 * brackets (`resource_ids[]=1&resource_ids[]=2`). Anything but positive whole numbers is a 422.
 */
function idList(value: unknown, name: string): number[] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]));
  const ids: number[] = [];
  for (const part of parts) {
    const raw = typeof part === 'string' ? part.trim() : part;
    if (raw === '') continue;
    if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw) || Number(raw) === 0) {
      throw invalid(`${name}: must be a list of positive whole numbers.`, name);
    }
    ids.push(Number(raw));
  }
  return ids.length === 0 ? undefined : ids;
}

/** A comma-separated or repeated list of words. */
function wordList(value: unknown, name: string): string[] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]));
  if (parts.some((p) => typeof p !== 'string')) throw invalid(`${name}: must be a list of words.`, name);
  const words = (parts as string[]).map((p) => p.trim()).filter((p) => p !== '');
  return words.length === 0 ? undefined : words;
}

function direction(query: Query): ReportDirection | undefined {
  const value = text(query, 'direction')?.toLowerCase();
  if (value === undefined) return undefined;
  if (value !== 'asc' && value !== 'desc') throw invalid("direction: must be 'asc' or 'desc'.", 'direction');
  return value;
}

function objectParam(query: Query, name: string): Query | undefined {
  const value = query[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(`${name}: must be a set of filters.`, name);
  return value as Query;
}

/** Refuses parameters this server does not apply, so that a client never gets records it did not ask for. */
function refuse(query: Query, names: readonly string[], prefix = ''): void {
  for (const name of names) {
    const value = query[name];
    const given = typeof value === 'string' ? value.trim() !== '' : value !== undefined && value !== null;
    if (given) throw invalid(`${prefix}${name}: is not supported by this server.`, `${prefix}${name}`);
  }
}

/** `GET /mrr.json`: `at_time` and `subscription_id`. */
export function mrrQuery(query: Query): MrrInput {
  const atTime = text(query, 'at_time');
  const ids = idList(text(query, 'subscription_id'), 'subscription_id');
  if (ids !== undefined && ids.length > 1) throw invalid('subscription_id: must be one id.', 'subscription_id');
  return {
    ...(atTime === undefined ? {} : { atTime }),
    ...(ids === undefined ? {} : { subscriptionId: ids[0]! }),
  };
}

/**
 * `GET /mrr_movements.json`: `subscription_id`, `page`, `per_page` (10 by default, more than 50
 * read as 50) and `direction`. Paging values are read leniently, as every list reads them.
 */
export function mrrMovementListQuery(query: Query): MrrMovementListInput {
  const paging: ListPage = pageQuery.parse({ page: query.page });
  const perPage = text(query, 'per_page');
  const ids = idList(text(query, 'subscription_id'), 'subscription_id');
  if (ids !== undefined && ids.length > 1) throw invalid('subscription_id: must be one id.', 'subscription_id');
  const order = direction(query);
  return {
    page: paging.page,
    ...(perPage !== undefined && /^\d{1,6}$/.test(perPage) && Number(perPage) >= 1 ? { perPage: Number(perPage) } : {}),
    ...(ids === undefined ? {} : { subscriptionId: ids[0]! }),
    ...(order === undefined ? {} : { direction: order }),
  };
}

/** `GET /subscriptions_mrr.json`: `filter[subscription_ids]`, `at_time`, paging and `direction`. */
export function subscriptionMrrListQuery(query: Query): MrrListInput {
  const paging: ListPage = pageQuery.parse(query);
  const filter = objectParam(query, 'filter') ?? {};
  const ids = idList(filter.subscription_ids, 'filter[subscription_ids]');
  const atTime = text(query, 'at_time');
  const order = direction(query);
  return {
    page: paging.page,
    perPage: paging.perPage,
    ...(ids === undefined ? {} : { subscriptionIds: ids }),
    ...(atTime === undefined ? {} : { atTime }),
    ...(order === undefined ? {} : { direction: order }),
  };
}

function dateQuery(query: Query): Pick<MetadataListInput, 'startDate' | 'endDate' | 'startDatetime' | 'endDatetime'> {
  const out: Record<string, string> = {};
  for (const [name, key] of [
    ['start_date', 'startDate'],
    ['end_date', 'endDate'],
    ['start_datetime', 'startDatetime'],
    ['end_datetime', 'endDatetime'],
  ] as const) {
    const value = text(query, name);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** `GET /{resource_type}/metadata.json`: paging, date bounds, `with_deleted`, `resource_ids[]`, `direction`. */
export function metadataListQuery(query: Query): MetadataListInput {
  const paging: ListPage = pageQuery.parse(query);
  const dateField = text(query, 'date_field');
  if (dateField !== undefined && dateField !== 'created_at' && dateField !== 'updated_at') {
    throw invalid("date_field: must be 'created_at' or 'updated_at'.", 'date_field');
  }
  const withDeleted = text(query, 'with_deleted');
  if (withDeleted !== undefined && withDeleted !== 'true' && withDeleted !== 'false') {
    throw invalid('with_deleted: must be true or false.', 'with_deleted');
  }
  const ids = idList(query.resource_ids, 'resource_ids');
  const order = direction(query);
  return {
    page: paging.page,
    perPage: paging.perPage,
    ...dateQuery(query),
    ...(dateField === undefined ? {} : { dateField }),
    ...(withDeleted === undefined ? {} : { withDeleted: withDeleted === 'true' }),
    ...(ids === undefined ? {} : { resourceIds: ids }),
    ...(order === undefined ? {} : { direction: order }),
  };
}

/**
 * `GET /subscriptions_components.json`: paging, `sort`, `direction`, `date_field` with its bounds,
 * `subscription_ids`, `product_family_ids`, `filter[currencies]` and `filter[subscription][states]`.
 * Refused with a 422 rather than ignored: `price_point_ids`, `include`,
 * `filter[use_site_exchange_rate]` and the nested subscription date filters.
 */
export function subscriptionComponentListQuery(query: Query): SubscriptionComponentListInput {
  refuse(query, ['price_point_ids', 'include']);
  const paging: ListPage = pageQuery.parse(query);
  const sort = text(query, 'sort');
  if (sort !== undefined && sort !== 'id' && sort !== 'updated_at') {
    throw invalid("sort: must be 'id' or 'updated_at'.", 'sort');
  }
  const dateField = text(query, 'date_field');
  if (dateField !== undefined && dateField !== 'updated_at')
    throw invalid("date_field: must be 'updated_at'.", 'date_field');
  const filter = objectParam(query, 'filter') ?? {};
  refuse(filter, ['use_site_exchange_rate'], 'filter.');
  const subscription = objectParam(filter, 'subscription') ?? {};
  refuse(
    subscription,
    ['date_field', 'start_date', 'end_date', 'start_datetime', 'end_datetime'],
    'filter.subscription.',
  );
  const subscriptionIds = idList(query.subscription_ids, 'subscription_ids');
  const productFamilyIds = idList(query.product_family_ids, 'product_family_ids');
  const currencies = wordList(filter.currencies, 'filter[currencies]');
  const states = wordList(subscription.states, 'filter[subscription][states]');
  const order = direction(query);
  return {
    page: paging.page,
    perPage: paging.perPage,
    ...dateQuery(query),
    ...(sort === undefined ? {} : { sort }),
    ...(order === undefined ? {} : { direction: order }),
    ...(dateField === undefined ? {} : { dateField }),
    ...(subscriptionIds === undefined ? {} : { subscriptionIds }),
    ...(productFamilyIds === undefined ? {} : { productFamilyIds }),
    ...(currencies === undefined ? {} : { currencies }),
    ...(states === undefined ? {} : { subscriptionStates: states }),
  };
}
