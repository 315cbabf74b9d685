/** Subscriptions on SQL: one row each, lifecycle instants as columns, coupons and extensions as JSON. */
import type {
  PaymentCollectionMethod,
  SubscriptionDateField,
  SubscriptionFilter,
  SubscriptionRecord,
  SubscriptionState,
  SubscriptionsRepository,
} from 'billing-engine';
import { BillingError } from 'billing-engine';
import type { Insertable, Selectable, Updateable } from 'kysely';
import {
  decodeBoolean,
  decodeId,
  decodeInstant,
  decodeInteger,
  decodeJsonObject,
  decodeJsonStringArray,
  decodeMoney,
  decodeNullableInstant,
  encodeMoney,
} from '../codecs.js';
import { compiledOnce } from '../compiled-once.js';
import type { SubscriptionsTable } from '../schema.js';
import { withConstraintConflict } from './constraint-conflict.js';
import type { RepositoryContext } from './repository-context.js';

/** The hottest read of a renewal, compiled once (see `compiled-once.ts`). */
const subscriptionById = compiledOnce((db, siteId: number, id: number) =>
  db.selectFrom('subscriptions').selectAll().where('site_id', '=', siteId).where('id', '=', id),
);

type SubscriptionFields = Partial<Omit<SubscriptionRecord, 'id' | 'siteId' | 'version'>>;

type DateColumn =
  | 'current_period_ends_at'
  | 'current_period_started_at'
  | 'created_at'
  | 'activated_at'
  | 'canceled_at'
  | 'expires_at'
  | 'trial_started_at'
  | 'trial_ended_at'
  | 'updated_at'
  | 'next_assessment_at';

/** The column of each date field a list filters or sorts on (the wire's `starts_at` is our `started_at`). */
const DATE_COLUMNS: Readonly<Record<SubscriptionDateField, DateColumn>> = {
  current_period_ends_at: 'current_period_ends_at',
  current_period_starts_at: 'current_period_started_at',
  created_at: 'created_at',
  activated_at: 'activated_at',
  canceled_at: 'canceled_at',
  expires_at: 'expires_at',
  trial_started_at: 'trial_started_at',
  trial_ended_at: 'trial_ended_at',
  updated_at: 'updated_at',
  next_assessment_at: 'next_assessment_at',
};

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

/** Builds the subscriptions repository of one transaction. */
export function createSubscriptionsRepository(context: RepositoryContext): SubscriptionsRepository {
  const { db, encode, hooks } = context;
  // A command reads its subscription, updates it at its version, and its post reads it again to
  // issue the invoice (issue 18): within one transaction the row is read once, and the row an
  // update returns is the next read's answer. Only this repository writes the record's columns
  // (the ledger's balance column is not part of it); purge and site data clearing, which delete
  // subscriptions, clear every cache.
  const cached = context.caches.of<SubscriptionRecord>('subscriptions');
  return {
    async insert(subscription) {
      cached.clear();
      const values = {
        ...subscriptionColumns(subscription, encode),
        site_id: subscription.siteId,
        version: 1,
      } as Insertable<SubscriptionsTable>;
      const insert = () =>
        db
          .insertInto('subscriptions')
          .values(values)
          // NULL referral codes never conflict, so no row back means a taken code.
          .onConflict((oc) => oc.columns(['site_id', 'referral_code']).doNothing())
          .returningAll()
          .executeTakeFirst();
      // `ON CONFLICT` names one index; a taken reference violates the other, partial one.
      const reference = subscription.reference ?? null;
      const row =
        reference === null
          ? await insert()
          : await withConstraintConflict(context, 'unique', () => referenceTaken(reference), insert);
      if (row === undefined) throw referralTaken(subscription.referralCode);
      return decodeSubscription(row);
    },

    async findById(siteId, id) {
      return cached.get(`${siteId}:${id}`, async () => {
        const [row] = (await subscriptionById.run(context, siteId, id)).rows;
        return row && decodeSubscription(row);
      });
    },

    async updateAtVersion(siteId, id, expectedVersion, patch) {
      cached.clear();
      const update = () =>
        db
          .updateTable('subscriptions')
          .set((eb) => ({ ...subscriptionColumns(patch, encode), version: eb('version', '+', 1) }))
          .where('site_id', '=', siteId)
          .where('id', '=', id)
          .where('version', '=', expectedVersion)
          .returningAll()
          .executeTakeFirst();
      const code = patch.referralCode;
      const reference = patch.reference;
      // Only a new code or reference can violate a unique index; the conflict names which one.
      const row =
        (code === undefined || code === null) && (reference === undefined || reference === null)
          ? await update()
          : await withConstraintConflict(
              context,
              'unique',
              () => (code === undefined || code === null ? referenceTaken(reference ?? '') : referralTaken(code)),
              update,
            );
      if (row === undefined) return undefined;
      const updated = decodeSubscription(row);
      cached.put(`${siteId}:${id}`, updated);
      return updated;
    },

    async list(siteId, filter: SubscriptionFilter, page) {
      const { states, ids, couponCode, dateField, start, end } = filter;
      if ((states !== undefined && states.length === 0) || (ids !== undefined && ids.length === 0)) return [];
      const direction = filter.direction === 'asc' ? 'asc' : 'desc';
      const sortColumn = DATE_COLUMNS[filter.sort ?? 'created_at'];
      const rangeColumn = dateField === undefined ? undefined : DATE_COLUMNS[dateField];
      const rows = await db
        .selectFrom('subscriptions')
        .selectAll()
        .where('site_id', '=', siteId)
        .$if(states !== undefined, (qb) => qb.where('state', 'in', states as readonly SubscriptionState[]))
        .$if(filter.productId !== undefined, (qb) => qb.where('product_id', '=', filter.productId as number))
        .$if(filter.customerId !== undefined, (qb) => qb.where('customer_id', '=', filter.customerId as number))
        .$if(filter.paymentProfileId !== undefined, (qb) =>
          qb.where('payment_profile_id', '=', filter.paymentProfileId as number),
        )
        .$if(ids !== undefined, (qb) => qb.where('id', 'in', ids as readonly number[]))
        .$if(couponCode !== undefined, (qb) => qb.where(hooks.jsonArrayContains('coupon_codes', couponCode as string)))
        // A null date is outside every range, as `>=` / `<=` against NULL is never true.
        .$if(rangeColumn !== undefined && start !== undefined, (qb) =>
          qb.where(rangeColumn as DateColumn, '>=', encode.instant(start as Date)),
        )
        .$if(rangeColumn !== undefined && end !== undefined, (qb) =>
          qb.where(rangeColumn as DateColumn, '<=', encode.instant(end as Date)),
        )
        // Nulls last in both directions, spelled out because the dialects' defaults differ.
        .orderBy(sortColumn, (ob) => (direction === 'asc' ? ob.asc() : ob.desc()).nullsLast())
        .orderBy('id', direction)
        .limit(Math.max(0, page.perPage))
        .offset(Math.max(0, (page.page - 1) * page.perPage))
        .execute();
      return rows.map(decodeSubscription);
    },

    async findByReferralCode(siteId, code) {
      const row = await db
        .selectFrom('subscriptions')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('referral_code', '=', code)
        .executeTakeFirst();
      return row && decodeSubscription(row);
    },

    async findByReference(siteId, reference) {
      const row = await db
        .selectFrom('subscriptions')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('reference', '=', reference)
        .executeTakeFirst();
      return row && decodeSubscription(row);
    },

    async countForCustomer(siteId, customerId) {
      const row = await db
        .selectFrom('subscriptions')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('site_id', '=', siteId)
        .where('customer_id', '=', customerId)
        .executeTakeFirstOrThrow();
      return decodeInteger(row.n);
    },
  };
}

/** The columns of the fields present in `fields`; keys absent or undefined are left out (unchanged). */
function subscriptionColumns(
  fields: SubscriptionFields,
  encode: RepositoryContext['encode'],
): Updateable<SubscriptionsTable> {
  const set: Updateable<SubscriptionsTable> = {};
  const at = encode.nullableInstant;
  if (fields.customerId !== undefined) set.customer_id = fields.customerId;
  if (fields.productId !== undefined) set.product_id = fields.productId;
  if (fields.productVersion !== undefined) set.product_version = fields.productVersion;
  if (fields.reference !== undefined) set.reference = fields.reference;
  if (fields.paymentProfileId !== undefined) set.payment_profile_id = fields.paymentProfileId;
  if (fields.paymentCollectionMethod !== undefined) set.payment_collection_method = fields.paymentCollectionMethod;
  if (fields.state !== undefined) set.state = fields.state;
  if (fields.periodAnchorAt !== undefined) set.period_anchor_at = encode.instant(fields.periodAnchorAt);
  if (fields.periodIndex !== undefined) set.period_index = fields.periodIndex;
  if (fields.currentPeriodStartedAt !== undefined)
    set.current_period_started_at = encode.instant(fields.currentPeriodStartedAt);
  if (fields.currentPeriodEndsAt !== undefined) set.current_period_ends_at = encode.instant(fields.currentPeriodEndsAt);
  if (fields.nextAssessmentAt !== undefined) set.next_assessment_at = at(fields.nextAssessmentAt);
  if (fields.trialStartedAt !== undefined) set.trial_started_at = at(fields.trialStartedAt);
  if (fields.trialEndedAt !== undefined) set.trial_ended_at = at(fields.trialEndedAt);
  if (fields.activatedAt !== undefined) set.activated_at = at(fields.activatedAt);
  if (fields.canceledAt !== undefined) set.canceled_at = at(fields.canceledAt);
  if (fields.expiresAt !== undefined) set.expires_at = at(fields.expiresAt);
  if (fields.delayedCancelAt !== undefined) set.delayed_cancel_at = at(fields.delayedCancelAt);
  if (fields.cancelAtEndOfPeriod !== undefined)
    set.cancel_at_end_of_period = encode.boolean(fields.cancelAtEndOfPeriod);
  if (fields.cancellationMessage !== undefined) set.cancellation_message = fields.cancellationMessage;
  if (fields.cancellationMethod !== undefined) set.cancellation_method = fields.cancellationMethod;
  if (fields.signupPaymentId !== undefined) set.signup_payment_id = fields.signupPaymentId;
  if (fields.signupRevenueInCents !== undefined) set.signup_revenue_in_cents = encodeMoney(fields.signupRevenueInCents);
  if (fields.couponCodes !== undefined) set.coupon_codes = encode.json(fields.couponCodes);
  if (fields.referralCode !== undefined) set.referral_code = fields.referralCode;
  if (fields.data !== undefined) set.data = encode.json(fields.data);
  if (fields.createdAt !== undefined) set.created_at = encode.instant(fields.createdAt);
  if (fields.updatedAt !== undefined) set.updated_at = encode.instant(fields.updatedAt);
  return set;
}

function decodeSubscription(row: Selectable<SubscriptionsTable>): SubscriptionRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    customerId: decodeId(row.customer_id),
    productId: decodeId(row.product_id),
    productVersion: decodeInteger(row.product_version),
    reference: row.reference ?? null,
    paymentProfileId: row.payment_profile_id === null ? null : decodeId(row.payment_profile_id),
    paymentCollectionMethod: decodeCollectionMethod(row.payment_collection_method),
    state: decodeState(row.state),
    periodAnchorAt: decodeInstant(row.period_anchor_at),
    periodIndex: decodeInteger(row.period_index),
    currentPeriodStartedAt: decodeInstant(row.current_period_started_at),
    currentPeriodEndsAt: decodeInstant(row.current_period_ends_at),
    nextAssessmentAt: decodeNullableInstant(row.next_assessment_at),
    trialStartedAt: decodeNullableInstant(row.trial_started_at),
    trialEndedAt: decodeNullableInstant(row.trial_ended_at),
    activatedAt: decodeNullableInstant(row.activated_at),
    canceledAt: decodeNullableInstant(row.canceled_at),
    expiresAt: decodeNullableInstant(row.expires_at),
    delayedCancelAt: decodeNullableInstant(row.delayed_cancel_at),
    cancelAtEndOfPeriod: decodeBoolean(row.cancel_at_end_of_period),
    cancellationMessage: row.cancellation_message,
    cancellationMethod: row.cancellation_method,
    signupPaymentId: row.signup_payment_id === null ? null : decodeId(row.signup_payment_id),
    signupRevenueInCents: decodeMoney(row.signup_revenue_in_cents),
    couponCodes: decodeJsonStringArray(row.coupon_codes),
    referralCode: row.referral_code,
    data: decodeJsonObject(row.data),
    version: decodeInteger(row.version),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

function referralTaken(code: string | null): BillingError {
  return new BillingError('conflict', `Referral code ${code ?? ''} is already taken.`, {
    data: { referralCode: code },
  });
}

function referenceTaken(reference: string): BillingError {
  return new BillingError('conflict', `Reference ${reference} is already taken.`, { data: { reference } });
}

function decodeCollectionMethod(value: string): PaymentCollectionMethod {
  if (value === 'automatic' || value === 'remittance') return value;
  throw new BillingError('storage', `Unknown payment collection method ${value}.`);
}

function decodeState(value: string): SubscriptionState {
  if (STATES.has(value)) return value as SubscriptionState;
  throw new BillingError('storage', `Unknown subscription state ${value}.`);
}
