/** Churn reason codes and coupon subcodes on SQL. */
import {
  BillingError,
  type CouponSubcodeRecord,
  type CouponSubcodesRepository,
  type ReasonCodeRecord,
  type ReasonCodesRepository,
} from 'billing-engine';
import type { Selectable, Updateable } from 'kysely';
import { decodeId, decodeInstant, decodeInteger } from '../codecs.js';
import type { CouponSubcodesTable, ReasonCodesTable } from '../schema-site-extras.js';
import { withConstraintConflict } from './constraint-conflict.js';
import type { RepositoryContext } from './repository-context.js';

/** The key reason codes are unique on: the code in lower case. */
function codeKey(code: string): string {
  return code.toLowerCase();
}

/** Builds the reason-codes repository of one transaction. */
export function createReasonCodesRepository(context: RepositoryContext): ReasonCodesRepository {
  const { db, encode } = context;
  const taken = (code: string | undefined) =>
    new BillingError('conflict', `Reason code ${code ?? ''} is already taken.`, { data: { code } });
  return {
    async insert(code) {
      const row = await db
        .insertInto('reason_codes')
        .values({
          site_id: code.siteId,
          code: code.code,
          code_key: codeKey(code.code),
          description: code.description,
          position: code.position,
          created_at: encode.instant(code.createdAt),
          updated_at: encode.instant(code.updatedAt),
        })
        .onConflict((oc) => oc.columns(['site_id', 'code_key']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) throw taken(code.code);
      return decodeReasonCode(row);
    },

    async findById(siteId, id) {
      const row = await db
        .selectFrom('reason_codes')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && decodeReasonCode(row);
    },

    async findByCode(siteId, code) {
      const row = await db
        .selectFrom('reason_codes')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('code_key', '=', codeKey(code))
        .executeTakeFirst();
      return row && decodeReasonCode(row);
    },

    async list(siteId, page) {
      const rows = await db
        .selectFrom('reason_codes')
        .selectAll()
        .where('site_id', '=', siteId)
        .orderBy('position')
        .orderBy('id')
        .limit(Math.max(0, page.perPage))
        .offset(Math.max(0, (page.page - 1) * page.perPage))
        .execute();
      return rows.map(decodeReasonCode);
    },

    async update(siteId, id, patch) {
      const set: Updateable<ReasonCodesTable> = {};
      if (patch.code !== undefined) {
        set.code = patch.code;
        set.code_key = codeKey(patch.code);
      }
      if (patch.description !== undefined) set.description = patch.description;
      if (patch.position !== undefined) set.position = patch.position;
      if (patch.updatedAt !== undefined) set.updated_at = encode.instant(patch.updatedAt);
      if (Object.keys(set).length === 0) return this.findById(siteId, id);
      const update = () =>
        db
          .updateTable('reason_codes')
          .set(set)
          .where('site_id', '=', siteId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst();
      const row =
        patch.code === undefined
          ? await update()
          : await withConstraintConflict(context, 'unique', () => taken(patch.code), update);
      return row && decodeReasonCode(row);
    },

    async delete(siteId, id) {
      const result = await db
        .deleteFrom('reason_codes')
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

/** Builds the coupon-subcodes repository of one transaction. */
export function createCouponSubcodesRepository({ db, encode }: RepositoryContext): CouponSubcodesRepository {
  return {
    async insert(subcode) {
      const row = await db
        .insertInto('coupon_subcodes')
        .values({
          site_id: subcode.siteId,
          coupon_id: subcode.couponId,
          code: subcode.code,
          created_at: encode.instant(subcode.createdAt),
        })
        .onConflict((oc) => oc.columns(['site_id', 'code']).doNothing())
        .returningAll()
        .executeTakeFirst();
      return row && decodeSubcode(row);
    },

    async findByCode(siteId, code) {
      const row = await db
        .selectFrom('coupon_subcodes')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('code', '=', code)
        .executeTakeFirst();
      return row && decodeSubcode(row);
    },

    async list(siteId, couponId, page) {
      const rows = await db
        .selectFrom('coupon_subcodes')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('coupon_id', '=', couponId)
        .orderBy('id')
        .limit(Math.max(0, page.perPage))
        .offset(Math.max(0, (page.page - 1) * page.perPage))
        .execute();
      return rows.map(decodeSubcode);
    },

    async delete(siteId, couponId, code) {
      const result = await db
        .deleteFrom('coupon_subcodes')
        .where('site_id', '=', siteId)
        .where('coupon_id', '=', couponId)
        .where('code', '=', code)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async deleteAll(siteId, couponId) {
      const result = await db
        .deleteFrom('coupon_subcodes')
        .where('site_id', '=', siteId)
        .where('coupon_id', '=', couponId)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

function decodeReasonCode(row: Selectable<ReasonCodesTable>): ReasonCodeRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    code: row.code,
    description: row.description,
    position: decodeInteger(row.position),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

function decodeSubcode(row: Selectable<CouponSubcodesTable>): CouponSubcodeRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    couponId: decodeId(row.coupon_id),
    code: row.code,
    createdAt: decodeInstant(row.created_at),
  };
}
