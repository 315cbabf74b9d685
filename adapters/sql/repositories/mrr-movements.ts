/**
 * MRR movements on SQL (migration 22): one row per change of a subscription's MRR, its lines as a
 * JSON list. The table is added to the schema here (`withTables`), as the proforma invoices are.
 */
import {
  BillingError,
  type MrrMovementCategory,
  type MrrMovementLineItem,
  type MrrMovementListFilter,
  type MrrMovementRecord,
  type MrrMovementsRepository,
} from 'billing-engine';
import type { Kysely, Selectable } from 'kysely';
import { decodeId, decodeInstant, decodeInteger, decodeMoney } from '../codecs.js';
import { compiledOnce } from '../compiled-once.js';
import type { Database, IdColumn, InstantColumn, Int8Column, JsonColumn } from '../schema.js';
import type { RepositoryContext } from './repository-context.js';

/** `mrr_movements` (migration 22). */
export interface MrrMovementsTable {
  id: IdColumn;
  site_id: Int8Column;
  subscription_id: Int8Column;
  occurred_at: InstantColumn;
  category: string;
  amount_in_cents: Int8Column;
  plan_amount_in_cents: Int8Column;
  usage_amount_in_cents: Int8Column;
  mrr_in_cents: Int8Column;
  plan_mrr_in_cents: Int8Column;
  usage_mrr_in_cents: Int8Column;
  subscriber_name: string;
  line_items: JsonColumn;
}

/** The tables this repository reads beside the shared schema. */
export type MrrMovementTables = {
  mrr_movements: MrrMovementsTable;
};

/** The Kysely instance with the movement table added to the schema's tables. */
export function mrrMovementsDb(db: Kysely<Database>): Kysely<Database & MrrMovementTables> {
  return db.withTables<MrrMovementTables>();
}

/** Removes every movement of the site (a site data clear). */
export async function clearMrrMovementData(db: Kysely<Database>, siteId: number): Promise<void> {
  await mrrMovementsDb(db).deleteFrom('mrr_movements').where('site_id', '=', siteId).execute();
}

/** Removes a purged subscription's movements; how many. */
export async function purgeMrrMovementRows(
  db: Kysely<Database>,
  siteId: number,
  subscriptionId: number,
): Promise<number> {
  const result = await mrrMovementsDb(db)
    .deleteFrom('mrr_movements')
    .where('site_id', '=', siteId)
    .where('subscription_id', '=', subscriptionId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A subscription's last movement, compiled once (see `compiled-once.ts`): read by every command that touches it. */
const lastMovement = compiledOnce((plain, siteId: number, subscriptionId: number) =>
  mrrMovementsDb(plain)
    .selectFrom('mrr_movements')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('subscription_id', '=', subscriptionId)
    .orderBy('id', 'desc')
    .limit(1),
);

/** Builds the MRR movements repository of one transaction. */
export function createMrrMovementsRepository(context: RepositoryContext): MrrMovementsRepository {
  const db = mrrMovementsDb(context.db);
  const { encode } = context;
  const filtered = (siteId: number, filter: MrrMovementListFilter) =>
    db
      .selectFrom('mrr_movements')
      .where('site_id', '=', siteId)
      .where('category', '<>', 'baseline')
      .$if(filter.subscriptionId !== undefined, (qb) => qb.where('subscription_id', '=', filter.subscriptionId!));
  return {
    async insert(movement) {
      const row = await db
        .insertInto('mrr_movements')
        .values({
          site_id: movement.siteId,
          subscription_id: movement.subscriptionId,
          occurred_at: encode.instant(movement.occurredAt),
          category: movement.category,
          amount_in_cents: movement.amountInCents,
          plan_amount_in_cents: movement.planAmountInCents,
          usage_amount_in_cents: movement.usageAmountInCents,
          mrr_in_cents: movement.mrrInCents,
          plan_mrr_in_cents: movement.planMrrInCents,
          usage_mrr_in_cents: movement.usageMrrInCents,
          subscriber_name: movement.subscriberName,
          line_items: encode.json(movement.lineItems),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeMovement(row);
    },

    async findLast(siteId, subscriptionId) {
      const [row] = (await lastMovement.run(context, siteId, subscriptionId)).rows;
      return row && decodeMovement(row);
    },

    async list(siteId, filter, page) {
      const rows = await filtered(siteId, filter)
        .selectAll()
        .orderBy('id', filter.direction)
        .limit(Math.max(0, page.perPage))
        .offset(Math.max(0, (page.page - 1) * page.perPage))
        .execute();
      return rows.map(decodeMovement);
    },

    async count(siteId, filter) {
      const row = await filtered(siteId, filter)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      return decodeInteger(row.n, 'a count');
    },
  };
}

const CATEGORIES: readonly MrrMovementCategory[] = [
  'new_business',
  'expansion',
  'contraction',
  'churn',
  'reactivation',
  'baseline',
];

function decodeCategory(value: string): MrrMovementCategory {
  if ((CATEGORIES as readonly string[]).includes(value)) return value as MrrMovementCategory;
  throw new BillingError('storage', `Unknown MRR movement category ${value}.`);
}

function decodeLineItems(value: unknown): MrrMovementLineItem[] {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw new BillingError('storage', 'Cannot parse a stored JSON document.', { cause: error });
    }
  }
  if (!Array.isArray(parsed)) throw new BillingError('storage', 'MRR movement line items are not a JSON list.');
  return parsed.map((item: unknown) => {
    if (item === null || typeof item !== 'object')
      throw new BillingError('storage', 'An MRR line item is not an object.');
    const line = item as Record<string, unknown>;
    return {
      productId: decodeId(line.productId),
      componentId: decodeInteger(line.componentId, 'a line component id'),
      pricePointId: line.pricePointId === null || line.pricePointId === undefined ? null : decodeId(line.pricePointId),
      name: String(line.name ?? ''),
      mrrInCents: decodeMoney(line.mrrInCents),
      movementInCents: decodeMoney(line.movementInCents),
      quantity: decodeInteger(line.quantity, 'a line quantity'),
      prevQuantity: decodeInteger(line.prevQuantity, 'a line quantity'),
      recurring: line.recurring === true,
    };
  });
}

function decodeMovement(row: Selectable<MrrMovementsTable>): MrrMovementRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    subscriptionId: decodeId(row.subscription_id),
    occurredAt: decodeInstant(row.occurred_at),
    category: decodeCategory(row.category),
    amountInCents: decodeMoney(row.amount_in_cents),
    planAmountInCents: decodeMoney(row.plan_amount_in_cents),
    usageAmountInCents: decodeMoney(row.usage_amount_in_cents),
    mrrInCents: decodeMoney(row.mrr_in_cents),
    planMrrInCents: decodeMoney(row.plan_mrr_in_cents),
    usageMrrInCents: decodeMoney(row.usage_mrr_in_cents),
    subscriberName: row.subscriber_name,
    lineItems: decodeLineItems(row.line_items),
  };
}
