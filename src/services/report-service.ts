import { endOfLocalDay, parseInstant, parseLocalDate, startOfLocalDay, toWallClock } from '../domain/time/index.js';
import { startOfCivilDay } from '../domain/time/local-day.js';
import { invalid, ValidationCollector } from '../errors.js';
import type {
  MetadataListFilter,
  MetadataRecord,
  MetafieldResource,
  MrrMovementRecord,
  MrrSubscriptionFilter,
  ReportDirection,
  SiteRecord,
  StorageTransaction,
  SubscriptionComponentListFilter,
  SubscriptionComponentReportRow,
  SubscriptionCounts,
  SubscriptionState,
} from '../ports/storage.js';
import { couponCache, MRR_STATES, type SubscriptionMrr, subscriptionMrr } from './mrr-computation.js';
import { runRead } from './read-runner.js';
import type { SubscriptionDeps } from './subscription-service.js';

/** The states in which dunning retries collect a failed renewal (the renewal service's dunning states). */
const DUNNING_STATES: readonly SubscriptionState[] = ['soft_failure', 'past_due'];

export {
  couponCache,
  MRR_STATES,
  type MrrLine,
  perMonth,
  type SubscriptionMrr,
  subscriptionMrr,
  subscriptionMrrLines,
} from './mrr-computation.js';

/** Subscriptions read per statement pair while the site's MRR is summed. */
const MRR_BATCH = 500;

/** The most ids one list filter may name: enough for any page, small enough for one statement. */
export const MAX_FILTER_IDS = 1000;

/**
 * The site's dashboard figures at the engine's clock (`at`). Counts are of subscription records;
 * revenue is money received net of money returned: the sum of successful `payment` ledger lines
 * (card payments, external and manual payments, prepayments) minus the sum of successful `refund`
 * lines, in minor units of the site's currency, over lines written at or before `at`.
 */
export interface SiteStatistics {
  readonly site: SiteRecord;
  readonly at: Date;
  /** Every subscription of the site, in any state. */
  readonly totalSubscriptions: number;
  /** Subscriptions created since the start of the site's current local day. */
  readonly subscriptionsToday: number;
  /** Net revenue since the site's first ledger line. */
  readonly totalRevenueInCents: number;
  /** Net revenue since the start of the current local day in the site's time zone. */
  readonly revenueTodayInCents: number;
  /** Net revenue since the start of the current local calendar month in the site's time zone. */
  readonly revenueThisMonthInCents: number;
  /** Net revenue since the start of the current local calendar year in the site's time zone. */
  readonly revenueThisYearInCents: number;
  /** Subscriptions in state `cancelled`. */
  readonly totalCanceledSubscriptions: number;
  /** Subscriptions in state `active`. */
  readonly totalActiveSubscriptions: number;
  /** Subscriptions in state `past_due`. */
  readonly totalPastDueSubscriptions: number;
  /** Subscriptions in state `unpaid`. */
  readonly totalUnpaidSubscriptions: number;
  /** Subscriptions in a state where dunning retries run: `soft_failure` and `past_due`. */
  readonly totalDunningSubscriptions: number;
}

/** The site's MRR: the sum over {@link MRR_STATES} subscriptions of {@link subscriptionMrr}. */
export interface SiteMrr {
  readonly site: SiteRecord;
  readonly at: Date;
  readonly amountInCents: number;
  readonly planAmountInCents: number;
  readonly usageAmountInCents: number;
}

/** A page of a report list. */
export interface ReportPage<T> {
  readonly site: SiteRecord;
  readonly items: readonly T[];
  readonly page: number;
  readonly perPage: number;
}

/** A page of a report list with the size of the whole list. */
export interface CountedReportPage<T> extends ReportPage<T> {
  readonly totalCount: number;
}

/** Options of {@link ReportService.mrr}. */
export interface MrrInput {
  /** The moment asked about; see {@link ReportService.mrr}. */
  readonly atTime?: string | Date;
  /** Only this subscription's MRR. */
  readonly subscriptionId?: number;
}

/** Options of {@link ReportService.listSubscriptionMrr}. */
export interface MrrListInput extends MrrInput {
  readonly subscriptionIds?: readonly number[];
  readonly page?: number;
  readonly perPage?: number;
  readonly direction?: ReportDirection;
}

/** Options of {@link ReportService.listMrrMovements}. */
export interface MrrMovementListInput {
  /** Only this subscription's movements. */
  readonly subscriptionId?: number;
  readonly page?: number;
  /** Default 10; more than 50 is read as 50. */
  readonly perPage?: number;
  /** By the order they were recorded in; `desc` (newest first) by default. */
  readonly direction?: ReportDirection;
}

/** Date bounds of a list, as the service's list endpoints take them. */
export interface DateBoundsInput {
  /** `YYYY-MM-DD`: from the start of that local day in the site's zone. */
  readonly startDate?: string;
  /** `YYYY-MM-DD`: to the end of that local day. */
  readonly endDate?: string;
  /** An instant (`2022-07-01 09:00:05`, in the site's zone unless it names an offset); wins over `startDate`. */
  readonly startDatetime?: string;
  /** Wins over `endDate`. */
  readonly endDatetime?: string;
}

/** Options of {@link ReportService.listMetadata}. */
export interface MetadataListInput extends DateBoundsInput {
  readonly page?: number;
  readonly perPage?: number;
  readonly dateField?: 'created_at' | 'updated_at';
  readonly resourceIds?: readonly number[];
  readonly direction?: ReportDirection;
  /** Deleted values are gone, never kept: `true` lists the same values as `false`. */
  readonly withDeleted?: boolean;
}

/** Options of {@link ReportService.listSubscriptionComponents}. */
export interface SubscriptionComponentListInput extends DateBoundsInput {
  readonly page?: number;
  readonly perPage?: number;
  readonly sort?: 'id' | 'updated_at';
  readonly direction?: ReportDirection;
  /** The only date field: the subscription component's `updated_at`. */
  readonly dateField?: 'updated_at';
  readonly subscriptionIds?: readonly number[];
  readonly productFamilyIds?: readonly number[];
  /** Only components of subscriptions in these states (`canceled` is read as `cancelled`). */
  readonly subscriptionStates?: readonly string[];
  /** The site has one currency: a list without it selects nothing. */
  readonly currencies?: readonly string[];
}

const DEFAULT_PER_PAGE = 20;
const MAX_PER_PAGE = 200;
/** The movement list's own page sizes (the service's: 10 by default, at most 50). */
const MOVEMENTS_DEFAULT_PER_PAGE = 10;
const MOVEMENTS_MAX_PER_PAGE = 50;

/** Site statistics, MRR and site-wide lists of subscription data. Every method reads only. */
export class ReportService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /** The storage, clock and gateway the commands run on. */
  protected get deps(): SubscriptionDeps {
    return this.#deps;
  }

  /** The site's statistics at the engine's clock (see {@link SiteStatistics} for each figure). */
  async siteStatistics(subdomain: string): Promise<SiteStatistics> {
    const at = this.#deps.clock.now();
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const today = startOfLocalDay(at, site.timeZone);
      const wall = toWallClock(at, site.timeZone);
      const monthStart = startOfCivilDay({ year: wall.year, month: wall.month, day: 1 }, site.timeZone);
      const yearStart = startOfCivilDay({ year: wall.year, month: 1, day: 1 }, site.timeZone);
      const counts: SubscriptionCounts = await tx.reports.countSubscriptions(site.id, today);
      const inState = (...states: SubscriptionState[]) => states.reduce((n, s) => n + (counts.byState[s] ?? 0), 0);
      return {
        site,
        at,
        totalSubscriptions: counts.total,
        subscriptionsToday: counts.createdSince,
        totalRevenueInCents: await tx.reports.netRevenue(site.id, null, at),
        revenueTodayInCents: await tx.reports.netRevenue(site.id, today, at),
        revenueThisMonthInCents: await tx.reports.netRevenue(site.id, monthStart, at),
        revenueThisYearInCents: await tx.reports.netRevenue(site.id, yearStart, at),
        totalCanceledSubscriptions: inState('cancelled'),
        totalActiveSubscriptions: inState('active'),
        totalPastDueSubscriptions: inState('past_due'),
        totalUnpaidSubscriptions: inState('unpaid'),
        totalDunningSubscriptions: inState(...DUNNING_STATES),
      };
    });
  }

  /**
   * The site's MRR now (or one subscription's, with `subscriptionId`; a subscription outside
   * {@link MRR_STATES} or of another site contributes 0). `atTime` may name any moment of the
   * site's current local day and answers the current figure: MRR at an earlier day would need the
   * product versions, allocations and coupon uses each subscription had then, which the engine
   * does not keep, so such a request is refused (422) rather than answered with today's figure.
   */
  async mrr(subdomain: string, input: MrrInput = {}): Promise<SiteMrr> {
    const at = this.#deps.clock.now();
    const subscriptionId = input.subscriptionId;
    if (subscriptionId !== undefined) checkIds([subscriptionId], 'Subscription id', 'subscription_id');
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      checkAtTime(input.atTime, at, site.timeZone);
      const filter: MrrSubscriptionFilter = {
        states: MRR_STATES,
        ...(subscriptionId === undefined ? {} : { subscriptionIds: [subscriptionId] }),
      };
      const { plan, usage } = await sumMrr(tx, site, filter);
      return { site, at, amountInCents: plan + usage, planAmountInCents: plan, usageAmountInCents: usage };
    });
  }

  /**
   * One page of MRR per subscription, over {@link MRR_STATES} subscriptions (only `subscriptionIds`
   * when given), by subscription id (`direction`, ascending by default). `atTime` as in {@link mrr}.
   */
  async listSubscriptionMrr(subdomain: string, input: MrrListInput = {}): Promise<CountedReportPage<SubscriptionMrr>> {
    const at = this.#deps.clock.now();
    const page = pageOf(input.page, input.perPage);
    const ids = input.subscriptionIds ?? (input.subscriptionId === undefined ? undefined : [input.subscriptionId]);
    if (ids !== undefined) checkIds(ids, 'Subscription ids', 'subscription_ids');
    const direction = checkDirection(input.direction);
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      checkAtTime(input.atTime, at, site.timeZone);
      const filter: MrrSubscriptionFilter = {
        states: MRR_STATES,
        ...(ids === undefined ? {} : { subscriptionIds: ids }),
      };
      const coupons = couponCache(tx, site.id);
      const inputs = await tx.reports.listMrrInputs(site.id, filter, direction, page);
      const items: SubscriptionMrr[] = [];
      for (const one of inputs) items.push(subscriptionMrr(one, await coupons(one), site.currency));
      return { site, items, totalCount: await tx.reports.countMrrSubscriptions(site.id, filter), ...page };
    });
  }

  /**
   * One page of the site's MRR movements (only `subscriptionId`'s when given), newest first unless
   * `direction` is `asc`. Movements are recorded going forward, by every command that changes a
   * subscription's MRR (see `mrr-movements.ts`): there are none from before the engine kept them.
   */
  async listMrrMovements(
    subdomain: string,
    input: MrrMovementListInput = {},
  ): Promise<CountedReportPage<MrrMovementRecord>> {
    const page = pageOf(input.page, input.perPage, MOVEMENTS_DEFAULT_PER_PAGE, MOVEMENTS_MAX_PER_PAGE);
    if (input.subscriptionId !== undefined) checkIds([input.subscriptionId], 'Subscription id', 'subscription_id');
    const direction = input.direction === undefined ? 'desc' : checkDirection(input.direction);
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const filter = {
        direction,
        ...(input.subscriptionId === undefined ? {} : { subscriptionId: input.subscriptionId }),
      };
      return {
        site,
        items: await tx.mrrMovements.list(site.id, filter, page),
        totalCount: await tx.mrrMovements.count(site.id, filter),
        ...page,
      };
    });
  }

  /**
   * One page of every metadata value of a resource type (`customers` or `subscriptions`) across
   * the site, by value id. `dateField` picks the timestamp the date bounds apply to (`updated_at`
   * when bounds are given without it).
   */
  async listMetadata(
    subdomain: string,
    resourceType: string,
    input: MetadataListInput = {},
  ): Promise<CountedReportPage<MetadataRecord>> {
    const resource = parseResourceType(resourceType);
    const page = pageOf(input.page, input.perPage);
    const direction = checkDirection(input.direction);
    if (input.resourceIds !== undefined) checkIds(input.resourceIds, 'Resource ids', 'resource_ids');
    if (input.dateField !== undefined && input.dateField !== 'created_at' && input.dateField !== 'updated_at') {
      throw invalid("Date field: must be 'created_at' or 'updated_at'.", 'date_field');
    }
    if (input.withDeleted !== undefined && typeof input.withDeleted !== 'boolean') {
      throw invalid('With deleted: must be true or false.', 'with_deleted');
    }
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const bounds = dateBounds(input, site.timeZone);
      const filter: MetadataListFilter = {
        direction,
        ...(input.resourceIds === undefined ? {} : { resourceIds: input.resourceIds }),
        ...(bounds.since === undefined && bounds.until === undefined
          ? {}
          : { dateField: input.dateField ?? 'updated_at', ...bounds }),
      };
      return {
        site,
        items: await tx.reports.listMetadata(site.id, resource, filter, page),
        totalCount: await tx.reports.countMetadata(site.id, resource, filter),
        ...page,
      };
    });
  }

  /**
   * One page of every subscription's components across the site, each with its component and the
   * pricing version it is pinned to; by the subscription component's id unless `sort` says
   * `updated_at`. Date bounds apply to the subscription component's `updated_at`.
   */
  async listSubscriptionComponents(
    subdomain: string,
    input: SubscriptionComponentListInput = {},
  ): Promise<ReportPage<SubscriptionComponentReportRow>> {
    const page = pageOf(input.page, input.perPage);
    const direction = checkDirection(input.direction);
    if (input.sort !== undefined && input.sort !== 'id' && input.sort !== 'updated_at') {
      throw invalid("Sort: must be 'id' or 'updated_at'.", 'sort');
    }
    if (input.dateField !== undefined && input.dateField !== 'updated_at') {
      throw invalid("Date field: must be 'updated_at'.", 'date_field');
    }
    if (input.subscriptionIds !== undefined) checkIds(input.subscriptionIds, 'Subscription ids', 'subscription_ids');
    if (input.productFamilyIds !== undefined)
      checkIds(input.productFamilyIds, 'Product family ids', 'product_family_ids');
    const states = input.subscriptionStates === undefined ? undefined : parseStates(input.subscriptionStates);
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const bounds = dateBounds(input, site.timeZone);
      const currencyMatches =
        input.currencies === undefined || input.currencies.some((c) => String(c).toUpperCase() === site.currency);
      const filter: SubscriptionComponentListFilter = {
        direction,
        sort: input.sort ?? 'id',
        ...(input.subscriptionIds === undefined ? {} : { subscriptionIds: input.subscriptionIds }),
        ...(input.productFamilyIds === undefined ? {} : { productFamilyIds: input.productFamilyIds }),
        ...(states === undefined ? {} : { subscriptionStates: states }),
        ...(bounds.since === undefined ? {} : { updatedSince: bounds.since }),
        ...(bounds.until === undefined ? {} : { updatedUntil: bounds.until }),
      };
      // The list's body has no count (the SDK's response is a bare page), so none is read.
      const items = currencyMatches ? await tx.reports.listSubscriptionComponents(site.id, filter, page) : [];
      return { site, items, ...page };
    });
  }
}

/**
 * The plan and usage MRR of every subscription `filter` selects, read in batches of `batchSize` by
 * id (keyset) in the caller's transaction, so the sum is of one state of the book.
 */
export async function sumMrr(
  tx: StorageTransaction,
  site: SiteRecord,
  filter: MrrSubscriptionFilter,
  batchSize = MRR_BATCH,
): Promise<{ plan: number; usage: number }> {
  const coupons = couponCache(tx, site.id);
  let plan = 0;
  let usage = 0;
  let afterId: number | undefined;
  for (;;) {
    const batch = { ...filter, ...(afterId === undefined ? {} : { afterId }) };
    const inputs = await tx.reports.listMrrInputs(site.id, batch, 'asc', { page: 1, perPage: batchSize });
    for (const one of inputs) {
      const mrr = subscriptionMrr(one, await coupons(one), site.currency);
      plan += mrr.planAmountInCents;
      usage += mrr.usageAmountInCents;
    }
    if (inputs.length < batchSize) return { plan, usage };
    afterId = inputs[inputs.length - 1]!.subscriptionId;
  }
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const REPORT_METHODS = [
  'siteStatistics',
  'mrr',
  'listSubscriptionMrr',
  'listMrrMovements',
  'listMetadata',
  'listSubscriptionComponents',
] as const;

function checkAtTime(atTime: string | Date | undefined, now: Date, zone: string): void {
  if (atTime === undefined || atTime === '') return;
  const asked = parseInstant(atTime, zone, 'At time');
  if (asked.getTime() < startOfLocalDay(now, zone).getTime() || asked.getTime() > endOfLocalDay(now, zone).getTime()) {
    throw invalid(
      "At time: MRR is only known for the site's current day; the engine does not keep the past prices, allocations and coupon uses an earlier figure needs.",
      'at_time',
    );
  }
}

function pageOf(
  page: number | undefined,
  perPage: number | undefined,
  defaultPerPage = DEFAULT_PER_PAGE,
  maxPerPage = MAX_PER_PAGE,
): { page: number; perPage: number } {
  const errors = new ValidationCollector();
  if (page !== undefined && !(Number.isSafeInteger(page) && page >= 1)) errors.add('Page: must be at least 1.', 'page');
  if (perPage !== undefined && !(Number.isSafeInteger(perPage) && perPage >= 1)) {
    errors.add('Per page: must be at least 1.', 'per_page');
  }
  errors.throwIfAny();
  return { page: page ?? 1, perPage: Math.min(perPage ?? defaultPerPage, maxPerPage) };
}

function checkDirection(direction: unknown): ReportDirection {
  if (direction === undefined) return 'asc';
  if (direction !== 'asc' && direction !== 'desc') throw invalid("Direction: must be 'asc' or 'desc'.", 'direction');
  return direction;
}

function checkIds(ids: readonly number[], label: string, attribute: string): void {
  if (!Array.isArray(ids) || ids.some((id) => !Number.isSafeInteger(id) || id <= 0)) {
    throw invalid(`${label}: must be positive whole numbers.`, attribute);
  }
  if (ids.length > MAX_FILTER_IDS) throw invalid(`${label}: at most ${MAX_FILTER_IDS} may be given.`, attribute);
}

function parseResourceType(value: unknown): MetafieldResource {
  if (value === 'customers' || value === 'customer') return 'customer';
  if (value === 'subscriptions' || value === 'subscription') return 'subscription';
  throw invalid("Resource type: must be 'customers' or 'subscriptions'.", 'resource_type');
}

const STATE_NAMES: ReadonlySet<string> = new Set<SubscriptionState>([
  'trialing',
  'active',
  'soft_failure',
  'past_due',
  'unpaid',
  'cancelled',
  'expired',
  'trial_ended',
  'on_hold',
  'suspended',
  'failed_to_create',
  'awaiting_signup',
]);

function parseStates(values: readonly string[]): SubscriptionState[] {
  const states: SubscriptionState[] = [];
  for (const raw of values) {
    const value = typeof raw === 'string' && raw.trim() === 'canceled' ? 'cancelled' : String(raw).trim();
    if (!STATE_NAMES.has(value))
      throw invalid(`States: '${value}' is not a subscription state.`, 'filter[subscription][states]');
    states.push(value as SubscriptionState);
  }
  return states;
}

/** Inclusive instants of a list's date bounds; a date-time bound wins over a date bound. */
function dateBounds(input: DateBoundsInput, zone: string): { since?: Date; until?: Date } {
  const since =
    input.startDatetime !== undefined
      ? parseInstant(input.startDatetime, zone, 'Start datetime')
      : input.startDate !== undefined
        ? parseLocalDate(input.startDate, zone, 'Start date')
        : undefined;
  const until =
    input.endDatetime !== undefined
      ? parseInstant(input.endDatetime, zone, 'End datetime')
      : input.endDate !== undefined
        ? endOfLocalDay(parseLocalDate(input.endDate, zone, 'End date'), zone)
        : undefined;
  return { ...(since === undefined ? {} : { since }), ...(until === undefined ? {} : { until }) };
}
