/** The wire format of prepayments, service credits, account balances and exports. */
import { z } from 'zod';
import type { ExportRecord } from '../ports/storage.js';
import type {
  AccountBalancesView,
  CreatedPrepaymentView,
  PrepaymentInput,
  PrepaymentListInput,
  PrepaymentRefundInput,
  PrepaymentView,
  ServiceCreditInput,
  ServiceCreditView,
} from '../services/account-service.js';
import { pageQuery } from './list-query.js';
import { type WireContext, wireTimestamp } from './wire-context.js';
import { defineWireRequest, isPlainObject } from './wire-request.js';
import { wireBoolean, wireCents, wireDecimal, wireText } from './wire-scalars.js';

const amountFields = {
  amount: wireDecimal.nullish(),
  amount_in_cents: wireCents.nullish(),
};

function amounts(a: { amount?: string | number | null; amount_in_cents?: string | number | null }) {
  return {
    ...(a.amount == null ? {} : { amount: a.amount }),
    ...(a.amount_in_cents == null ? {} : { amountInCents: a.amount_in_cents }),
  };
}

/**
 * `POST /subscriptions/{id}/prepayments.json`: `{"prepayment":{amount, memo, details, method}}`.
 * The service refuses `amount_in_cents` here; it is read anyway, as everywhere else in this API.
 */
export const prepaymentRequest = defineWireRequest(
  'prepayment',
  z
    .object(
      { ...amountFields, memo: wireText.nullish(), details: wireText.nullish(), method: wireText.nullish() },
      { error: 'must be an object.' },
    )
    .transform(
      (p): PrepaymentInput => ({
        ...amounts(p),
        ...(p.memo == null ? {} : { memo: p.memo }),
        ...(p.details == null ? {} : { details: p.details }),
        ...(p.method == null ? {} : { method: p.method }),
      }),
    ),
);

/** `POST /subscriptions/{id}/prepayments/{pid}/refunds.json`: `{"refund":{amount|amount_in_cents, memo, external}}`. */
export const prepaymentRefundRequest = defineWireRequest(
  'refund',
  z
    .object(
      { ...amountFields, memo: wireText.nullish(), external: wireBoolean.nullish() },
      { error: 'must be an object.' },
    )
    .transform(
      (r): PrepaymentRefundInput => ({
        ...amounts(r),
        ...(r.memo == null ? {} : { memo: r.memo }),
        ...(r.external == null ? {} : { external: r.external }),
      }),
    ),
);

const serviceCreditFields = z
  .object({ ...amountFields, memo: wireText.nullish() }, { error: 'must be an object.' })
  .transform((s): ServiceCreditInput => ({ ...amounts(s), ...(s.memo == null ? {} : { memo: s.memo }) }));

/** `POST /subscriptions/{id}/service_credits.json`: `{"service_credit":{amount, memo}}`. */
export const serviceCreditRequest = defineWireRequest('service_credit', serviceCreditFields);

/** `POST /subscriptions/{id}/service_credit_deductions.json`: `{"deduction":{amount, memo}}`. */
export const serviceCreditDeductionRequest = defineWireRequest('deduction', serviceCreditFields);

/**
 * The query of `GET /subscriptions/{id}/prepayments.json` (parsed by `parseQueryString`): paging,
 * clamped as every list's, and `filter[date_field|start_date|end_date]`, checked by the engine.
 */
export function prepaymentListInput(query: Readonly<Record<string, unknown>>): PrepaymentListInput {
  const { page, perPage } = pageQuery.parse({ page: query.page, per_page: query.per_page });
  const filter = isPlainObject(query.filter) ? query.filter : {};
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const dateField = text(filter.date_field);
  const startDate = text(filter.start_date);
  const endDate = text(filter.end_date);
  return {
    page,
    perPage,
    ...(dateField === undefined ? {} : { dateField }),
    ...(startDate === undefined ? {} : { startDate }),
    ...(endDate === undefined ? {} : { endDate }),
  };
}

/** `GET /subscriptions/{id}/account_balances.json`: each account's `balance_in_cents`. */
export function serializeAccountBalances(view: AccountBalancesView) {
  const balance = (cents: number) => ({ balance_in_cents: cents });
  return {
    open_invoices: balance(view.openInvoicesInCents),
    pending_invoices: balance(view.pendingInvoicesInCents),
    pending_discounts: balance(view.pendingDiscountsInCents),
    service_credits: balance(view.serviceCreditsInCents),
    prepayments: balance(view.prepaymentsInCents),
  };
}

/** A created prepayment: `{"prepayment":{id, subscription_id, amount_in_cents, memo, created_at, starting/ending_balance_in_cents}}`. */
export function serializeCreatedPrepayment(view: CreatedPrepaymentView, context: WireContext) {
  const { entry } = view;
  return {
    prepayment: {
      id: entry.id,
      subscription_id: entry.subscriptionId,
      amount_in_cents: entry.amountInCents,
      memo: entry.memo,
      created_at: wireTimestamp(entry.createdAt, context),
      starting_balance_in_cents: view.startingBalanceInCents,
      ending_balance_in_cents: view.endingBalanceInCents,
    },
  };
}

/** One prepayment of a list or a refund answer, with what remains of it. */
export function prepaymentJson(view: PrepaymentView, context: WireContext) {
  const { entry } = view;
  return {
    id: entry.id,
    subscription_id: entry.subscriptionId,
    amount_in_cents: entry.amountInCents,
    remaining_amount_in_cents: view.remainingInCents,
    refunded_amount_in_cents: view.refundedInCents,
    details: entry.details,
    external: entry.external,
    memo: entry.memo,
    payment_type: entry.method,
    created_at: wireTimestamp(entry.createdAt, context),
  };
}

/** A service credit or deduction: `{id, amount_in_cents, ending_balance_in_cents, entry_type, memo}`. */
export function serializeServiceCredit(view: ServiceCreditView) {
  return {
    id: view.entry.id,
    amount_in_cents: view.entry.amountInCents,
    ending_balance_in_cents: view.endingBalanceInCents,
    entry_type: view.entry.entryType === 'credit' ? 'Credit' : 'Debit',
    memo: view.entry.memo,
  };
}

/**
 * `{"batchjob":{id, created_at, finished_at, row_count, completed}}`: an export job's status;
 * `completed` is the string `"true"` or `"false"`, as the service's schema types it.
 */
export function serializeBatchJob(job: ExportRecord, context: WireContext) {
  return {
    batchjob: {
      id: job.id,
      created_at: wireTimestamp(job.createdAt, context),
      finished_at: wireTimestamp(job.finishedAt, context),
      row_count: job.rowCount,
      completed: job.status === 'completed' ? 'true' : 'false',
    },
  };
}
