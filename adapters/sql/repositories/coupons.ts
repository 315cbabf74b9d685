/** Coupons on SQL; redemption counting is one conditional UPDATE, so limits hold under races. */
import { BillingError, type CompoundingStrategy, type CouponRecord, type CouponsRepository } from 'billing-engine';
import { type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import {
  decodeBoolean,
  decodeDecimal,
  decodeId,
  decodeInstant,
  decodeInteger,
  decodeMoney,
  decodeNullableInstant,
  encodeDecimal,
  encodeMoney,
} from '../codecs.js';
import type { CouponsTable } from '../schema.js';
import { withConstraintConflict } from './constraint-conflict.js';
import type { RepositoryContext } from './repository-context.js';

type CouponFields = Partial<Omit<CouponRecord, 'id' | 'siteId' | 'redemptions'>>;

/** Builds the coupons repository of one transaction. */
export function createCouponsRepository(context: RepositoryContext): CouponsRepository {
  const { db, encode } = context;
  const codeTaken = (code: string | undefined) =>
    new BillingError('conflict', `Coupon code ${code ?? ''} is already taken.`, { data: { code } });

  return {
    async insert(coupon) {
      const values = {
        ...couponColumns(coupon, encode),
        site_id: coupon.siteId,
        redemptions: 0,
      } as Insertable<CouponsTable>;
      const row = await db
        .insertInto('coupons')
        .values(values)
        .onConflict((oc) => oc.columns(['site_id', 'code']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) throw codeTaken(coupon.code);
      return decodeCoupon(row);
    },

    async findById(siteId, id) {
      const row = await db
        .selectFrom('coupons')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && decodeCoupon(row);
    },

    async findByCode(siteId, code) {
      const row = await db
        .selectFrom('coupons')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('code', '=', code)
        .executeTakeFirst();
      if (row !== undefined) return decodeCoupon(row);
      // Not a coupon's own code: a subcode applies its coupon.
      const parent = await db
        .selectFrom('coupon_subcodes')
        .innerJoin('coupons', (join) =>
          join
            .onRef('coupons.site_id', '=', 'coupon_subcodes.site_id')
            .onRef('coupons.id', '=', 'coupon_subcodes.coupon_id'),
        )
        .selectAll('coupons')
        .where('coupon_subcodes.site_id', '=', siteId)
        .where('coupon_subcodes.code', '=', code)
        .executeTakeFirst();
      return parent && decodeCoupon(parent);
    },

    async list(siteId, page) {
      const rows = await db
        .selectFrom('coupons')
        .selectAll()
        .where('site_id', '=', siteId)
        .orderBy('id')
        .limit(Math.max(0, page.perPage))
        .offset(Math.max(0, (page.page - 1) * page.perPage))
        .execute();
      return rows.map(decodeCoupon);
    },

    async update(siteId, id, patch) {
      const set = couponColumns(patch, encode);
      if (Object.keys(set).length === 0) return this.findById(siteId, id);
      const update = () =>
        db
          .updateTable('coupons')
          .set(set)
          .where('site_id', '=', siteId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst();
      const row =
        patch.code === undefined
          ? await update()
          : await withConstraintConflict(context, 'unique', () => codeTaken(patch.code), update);
      return row && decodeCoupon(row);
    },

    async redeem(siteId, id, now) {
      // Check and increment in one statement: concurrent redeemers queue on the row lock and
      // re-check the count after the one ahead commits, so the last use goes to exactly one.
      const row = await db
        .updateTable('coupons')
        .set((eb) => ({ redemptions: eb('redemptions', '+', 1), updated_at: encode.instant(now) }))
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .where((eb) => eb.or([eb('conversion_limit', 'is', null), eb('redemptions', '<', eb.ref('conversion_limit'))]))
        .returningAll()
        .executeTakeFirst();
      return row && decodeCoupon(row);
    },

    async releaseRedemption(siteId, id, now) {
      const row = await db
        .updateTable('coupons')
        // CASE rather than GREATEST/MAX: the one spelling both dialects share.
        .set({
          redemptions: sql<number>`case when redemptions > 0 then redemptions - 1 else 0 end`,
          updated_at: encode.instant(now),
        })
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && decodeCoupon(row);
    },
  };
}

/** The columns of the fields present in `fields`; keys absent or undefined are left out (unchanged). */
function couponColumns(fields: CouponFields, encode: RepositoryContext['encode']): Updateable<CouponsTable> {
  const set: Updateable<CouponsTable> = {};
  if (fields.familyId !== undefined) set.family_id = fields.familyId;
  if (fields.name !== undefined) set.name = fields.name;
  if (fields.code !== undefined) set.code = fields.code;
  if (fields.description !== undefined) set.description = fields.description;
  if (fields.percentage !== undefined)
    set.percentage = fields.percentage === null ? null : encodeDecimal(fields.percentage);
  if (fields.amountInCents !== undefined) {
    set.amount_in_cents = fields.amountInCents === null ? null : encodeMoney(fields.amountInCents);
  }
  if (fields.recurring !== undefined) set.recurring = encode.boolean(fields.recurring);
  if (fields.durationPeriodCount !== undefined) set.duration_period_count = fields.durationPeriodCount;
  if (fields.endDate !== undefined) set.end_date = encode.nullableInstant(fields.endDate);
  if (fields.allowNegativeBalance !== undefined)
    set.allow_negative_balance = encode.boolean(fields.allowNegativeBalance);
  if (fields.stackable !== undefined) set.stackable = encode.boolean(fields.stackable);
  if (fields.compoundingStrategy !== undefined) set.compounding_strategy = fields.compoundingStrategy;
  if (fields.conversionLimit !== undefined) set.conversion_limit = fields.conversionLimit;
  if (fields.archivedAt !== undefined) set.archived_at = encode.nullableInstant(fields.archivedAt);
  if (fields.createdAt !== undefined) set.created_at = encode.instant(fields.createdAt);
  if (fields.updatedAt !== undefined) set.updated_at = encode.instant(fields.updatedAt);
  return set;
}

function decodeCoupon(row: Selectable<CouponsTable>): CouponRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    familyId: decodeId(row.family_id),
    name: row.name,
    code: row.code,
    description: row.description,
    percentage: row.percentage === null ? null : decodeDecimal(row.percentage),
    amountInCents: row.amount_in_cents === null ? null : decodeMoney(row.amount_in_cents),
    recurring: decodeBoolean(row.recurring),
    durationPeriodCount: row.duration_period_count === null ? null : decodeInteger(row.duration_period_count),
    endDate: decodeNullableInstant(row.end_date),
    allowNegativeBalance: decodeBoolean(row.allow_negative_balance),
    stackable: decodeBoolean(row.stackable),
    compoundingStrategy: decodeStrategy(row.compounding_strategy),
    conversionLimit: row.conversion_limit === null ? null : decodeInteger(row.conversion_limit),
    redemptions: decodeInteger(row.redemptions),
    archivedAt: decodeNullableInstant(row.archived_at),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

function decodeStrategy(value: string): CompoundingStrategy {
  if (value === 'compound' || value === 'full-price') return value;
  throw new BillingError('storage', `Unknown compounding strategy ${value}.`);
}
