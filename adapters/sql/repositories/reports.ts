/** Site-wide report reads on SQL. */
import {
  BillingError,
  type ComponentPricing,
  type ComponentRecord,
  type ComponentVersionRecord,
  type MetadataListFilter,
  type MetadataRecord,
  type MetafieldResource,
  type MrrComponentInput,
  type MrrSubscriptionFilter,
  type MrrSubscriptionInput,
  type PageRequest,
  type ProductTerms,
  type ReportsRepository,
  type SubscriptionComponentRecord,
  type SubscriptionCounts,
  type SubscriptionState,
} from 'billing-engine';
import { type Selectable, sql } from 'kysely';
import {
  decodeId,
  decodeInstant,
  decodeInteger,
  decodeJsonObject,
  decodeJsonStringArray,
  decodeMoney,
} from '../codecs.js';
import type { MetadataTable, SubscriptionComponentsTable } from '../schema.js';
import { decodeComponent, decodeComponentVersion } from './components.js';
import type { RepositoryContext } from './repository-context.js';

const STATES: ReadonlySet<string> = new Set<SubscriptionState>([
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

function decodeState(value: string): SubscriptionState {
  if (STATES.has(value)) return value as SubscriptionState;
  throw new BillingError('storage', `Unknown subscription state ${value}.`);
}

const limitOf = (page: PageRequest) => Math.max(0, page.perPage);
const offsetOf = (page: PageRequest) => Math.max(0, (page.page - 1) * page.perPage);

/** Builds the reports repository of one transaction. */
export function createReportsRepository({ db, encode }: RepositoryContext): ReportsRepository {
  const mrrQuery = (siteId: number, filter: MrrSubscriptionFilter) =>
    db
      .selectFrom('subscriptions')
      .where('subscriptions.site_id', '=', siteId)
      .where('subscriptions.state', 'in', [...filter.states])
      .$if(filter.subscriptionIds !== undefined, (qb) =>
        qb.where('subscriptions.id', 'in', [...(filter.subscriptionIds as readonly number[])]),
      )
      .$if(filter.afterId !== undefined, (qb) => qb.where('subscriptions.id', '>', filter.afterId as number));
  // `in ()` is not SQL: an empty list selects nothing, so it is answered without a statement.
  const selectsNothing = (filter: MrrSubscriptionFilter) =>
    filter.states.length === 0 || (filter.subscriptionIds !== undefined && filter.subscriptionIds.length === 0);

  const metadataQuery = (siteId: number, resourceType: MetafieldResource, filter: MetadataListFilter) => {
    const column = filter.dateField === 'created_at' ? 'created_at' : 'updated_at';
    return db
      .selectFrom('metadata')
      .where('site_id', '=', siteId)
      .where('resource_type', '=', resourceType)
      .$if(filter.resourceIds !== undefined, (qb) => qb.where('resource_id', 'in', [...filter.resourceIds!]))
      .$if(filter.dateField !== undefined && filter.since !== undefined, (qb) =>
        qb.where(column, '>=', encode.instant(filter.since!)),
      )
      .$if(filter.dateField !== undefined && filter.until !== undefined, (qb) =>
        qb.where(column, '<=', encode.instant(filter.until!)),
      );
  };

  return {
    async countSubscriptions(siteId, createdSince): Promise<SubscriptionCounts> {
      const rows = await db
        .selectFrom('subscriptions')
        .select((eb) => [
          'state',
          eb.fn.countAll().as('n'),
          eb.fn
            .sum(eb.case().when('created_at', '>=', encode.instant(createdSince)).then(1).else(0).end())
            .as('recent'),
        ])
        .where('site_id', '=', siteId)
        .groupBy('state')
        .execute();
      const byState: Partial<Record<SubscriptionState, number>> = {};
      let total = 0;
      let created = 0;
      for (const row of rows) {
        const n = decodeInteger(row.n, 'a count');
        byState[decodeState(row.state)] = n;
        total += n;
        created += decodeInteger(row.recent ?? 0, 'a count');
      }
      return { total, createdSince: created, byState };
    },

    async netRevenue(siteId, from, until) {
      const row = await db
        .selectFrom('ledger_transactions')
        .select(
          sql<unknown>`coalesce(sum(case when type = 'payment' then amount_in_cents else -amount_in_cents end), 0)`.as(
            'net',
          ),
        )
        .where('site_id', '=', siteId)
        .where('type', 'in', ['payment', 'refund'])
        .where((eb) => eb.or([eb('success', 'is', null), eb('success', '=', encode.boolean(true))]))
        .$if(from !== null, (qb) => qb.where('created_at', '>=', encode.instant(from!)))
        .where('created_at', '<=', encode.instant(until))
        .executeTakeFirstOrThrow();
      return decodeMoney(row.net);
    },

    async countMrrSubscriptions(siteId, filter) {
      if (selectsNothing(filter)) return 0;
      const row = await mrrQuery(siteId, filter)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      return decodeInteger(row.n, 'a count');
    },

    async listMrrInputs(siteId, filter, direction, page): Promise<MrrSubscriptionInput[]> {
      if (selectsNothing(filter)) return [];
      // One statement for the page of subscriptions with their pinned product terms...
      const rows = await mrrQuery(siteId, filter)
        .innerJoin('product_versions', (join) =>
          join
            .onRef('product_versions.site_id', '=', 'subscriptions.site_id')
            .onRef('product_versions.product_id', '=', 'subscriptions.product_id')
            .onRef('product_versions.version', '=', 'subscriptions.product_version'),
        )
        .select([
          'subscriptions.id as id',
          'subscriptions.state as state',
          'subscriptions.coupon_codes as coupon_codes',
          'subscriptions.data as data',
          'product_versions.terms as terms',
        ])
        .orderBy('subscriptions.id', direction)
        .limit(limitOf(page))
        .offset(offsetOf(page))
        .execute();
      if (rows.length === 0) return [];
      const ids = rows.map((row) => decodeId(row.id));
      // ...and one for every component of the page, with the pricing each is pinned to.
      const componentRows = await db
        .selectFrom('subscription_components')
        .innerJoin('components', (join) =>
          join
            .onRef('components.site_id', '=', 'subscription_components.site_id')
            .onRef('components.id', '=', 'subscription_components.component_id'),
        )
        .innerJoin('component_versions', (join) =>
          join
            .onRef('component_versions.site_id', '=', 'subscription_components.site_id')
            .onRef('component_versions.component_id', '=', 'subscription_components.component_id')
            .onRef('component_versions.version', '=', 'subscription_components.component_version'),
        )
        .select([
          'subscription_components.subscription_id as subscription_id',
          'subscription_components.component_id as component_id',
          'subscription_components.allocated_quantity as allocated_quantity',
          'subscription_components.unit_balance as unit_balance',
          'components.kind as kind',
          'component_versions.pricing as pricing',
        ])
        .where('subscription_components.site_id', '=', siteId)
        .where('subscription_components.subscription_id', 'in', ids)
        .orderBy('subscription_components.component_id')
        .execute();
      const bySubscription = new Map<number, MrrComponentInput[]>();
      for (const row of componentRows) {
        const kind = row.kind;
        if (kind !== 'quantity_based_component' && kind !== 'on_off_component' && kind !== 'metered_component')
          throw new BillingError('storage', `Unknown component kind ${kind}.`);
        const subscriptionId = decodeId(row.subscription_id);
        const list = bySubscription.get(subscriptionId) ?? [];
        list.push({
          componentId: decodeId(row.component_id),
          kind,
          allocatedQuantity: decodeInteger(row.allocated_quantity),
          unitBalance: decodeInteger(row.unit_balance),
          pricing: decodeJsonObject(row.pricing) as unknown as ComponentPricing,
        });
        bySubscription.set(subscriptionId, list);
      }
      return rows.map((row) => {
        const id = decodeId(row.id);
        const data = decodeJsonObject(row.data);
        return {
          subscriptionId: id,
          state: decodeState(row.state),
          terms: decodeJsonObject(row.terms) as unknown as ProductTerms,
          couponCodes: decodeJsonStringArray(row.coupon_codes),
          couponUses: numberRecord(data.couponUses),
          couponDeferred: stringList(data.couponDeferred),
          components: bySubscription.get(id) ?? [],
        };
      });
    },

    async countMetadata(siteId, resourceType, filter) {
      if (filter.resourceIds !== undefined && filter.resourceIds.length === 0) return 0;
      const row = await metadataQuery(siteId, resourceType, filter)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      return decodeInteger(row.n, 'a count');
    },

    async listMetadata(siteId, resourceType, filter, page) {
      if (filter.resourceIds !== undefined && filter.resourceIds.length === 0) return [];
      const rows = await metadataQuery(siteId, resourceType, filter)
        .selectAll()
        .orderBy('id', filter.direction ?? 'asc')
        .limit(limitOf(page))
        .offset(offsetOf(page))
        .execute();
      return rows.map(decodeValue);
    },

    async listSubscriptionComponents(siteId, filter, page) {
      for (const list of [filter.subscriptionIds, filter.productFamilyIds, filter.subscriptionStates]) {
        if (list !== undefined && list.length === 0) return [];
      }
      const direction = filter.direction ?? 'asc';
      let query = db
        .selectFrom('subscription_components')
        .selectAll('subscription_components')
        .where('subscription_components.site_id', '=', siteId)
        .$if(filter.subscriptionIds !== undefined, (qb) =>
          qb.where('subscription_components.subscription_id', 'in', [...filter.subscriptionIds!]),
        )
        .$if(filter.updatedSince !== undefined, (qb) =>
          qb.where('subscription_components.updated_at', '>=', encode.instant(filter.updatedSince!)),
        )
        .$if(filter.updatedUntil !== undefined, (qb) =>
          qb.where('subscription_components.updated_at', '<=', encode.instant(filter.updatedUntil!)),
        )
        .$if(filter.productFamilyIds !== undefined, (qb) =>
          qb.where('subscription_components.component_id', 'in', (sub) =>
            sub
              .selectFrom('components')
              .select('components.id')
              .where('components.site_id', '=', siteId)
              .where('components.family_id', 'in', [...filter.productFamilyIds!]),
          ),
        )
        .$if(filter.subscriptionStates !== undefined, (qb) =>
          qb.where('subscription_components.subscription_id', 'in', (sub) =>
            sub
              .selectFrom('subscriptions')
              .select('subscriptions.id')
              .where('subscriptions.site_id', '=', siteId)
              .where('subscriptions.state', 'in', [...filter.subscriptionStates!]),
          ),
        );
      query =
        filter.sort === 'updated_at'
          ? query
              .orderBy('subscription_components.updated_at', direction)
              .orderBy('subscription_components.id', direction)
          : query.orderBy('subscription_components.id', direction);
      const rows = (await query.limit(limitOf(page)).offset(offsetOf(page)).execute()).map(decodeComponentRow);
      if (rows.length === 0) return [];
      // The page's components and pinned versions in two statements, whatever the page size.
      const componentIds = [...new Set(rows.map((r) => r.componentId))];
      const components = new Map<number, ComponentRecord>(
        (
          await db
            .selectFrom('components')
            .selectAll()
            .where('site_id', '=', siteId)
            .where('id', 'in', componentIds)
            .execute()
        ).map((row) => {
          const component = decodeComponent(row);
          return [component.id, component];
        }),
      );
      const versions = new Map<string, ComponentVersionRecord>(
        (
          await db
            .selectFrom('component_versions')
            .selectAll()
            .where('site_id', '=', siteId)
            .where('component_id', 'in', componentIds)
            .where('version', 'in', [...new Set(rows.map((r) => r.componentVersion))])
            .execute()
        ).map((row) => {
          const version = decodeComponentVersion(row);
          return [`${version.componentId}:${version.version}`, version];
        }),
      );
      return rows.map((row) => {
        const component = components.get(row.componentId);
        const version = versions.get(`${row.componentId}:${row.componentVersion}`);
        if (component === undefined || version === undefined)
          throw new BillingError('storage', `Subscription component ${row.id} refers to a missing component version.`);
        return { subscriptionComponent: row, component, version };
      });
    },
  };
}

function decodeValue(row: Selectable<MetadataTable>): MetadataRecord {
  const resourceType = row.resource_type;
  if (resourceType !== 'customer' && resourceType !== 'subscription')
    throw new BillingError('storage', `Unknown metafield resource type ${resourceType}.`);
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    resourceType,
    resourceId: decodeId(row.resource_id),
    metafieldId: decodeId(row.metafield_id),
    name: row.name,
    value: row.value,
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

function decodeComponentRow(row: Selectable<SubscriptionComponentsTable>): SubscriptionComponentRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    subscriptionId: decodeId(row.subscription_id),
    componentId: decodeId(row.component_id),
    componentVersion: decodeInteger(row.component_version),
    allocatedQuantity: decodeInteger(row.allocated_quantity),
    unitBalance: decodeInteger(row.unit_balance),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

/** `data.couponUses` as counts; anything that is not a count is left out. */
function numberRecord(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof value !== 'object' || value === null) return out;
  for (const [key, count] of Object.entries(value)) if (typeof count === 'number') out[key] = count;
  return out;
}

/** `data.couponDeferred` as codes; anything that is not a string is left out. */
function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
