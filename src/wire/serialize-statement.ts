import type { StatementRecord } from '../invoices/model.js';
import { type WireContext, wireTimestamp } from './wire-context.js';

/**
 * A statement as the service's classic API writes it (`{"statement":{...}}`; the modern SDK has no
 * statement model): the period it covers (`opened_at`, `closed_at`), `settled_at` once it is closed
 * with nothing owed, balances and totals as integer `*_in_cents` like the rest of the classic API,
 * and the ids of the period's ledger lines and invoices.
 */
export interface StatementJson {
  readonly id: number;
  readonly subscription_id: number;
  readonly customer_id: number;
  readonly period_index: number;
  readonly opened_at: string | null;
  readonly closed_at: string | null;
  readonly settled_at: string | null;
  readonly created_at: string | null;
  readonly starting_balance_in_cents: number;
  readonly ending_balance_in_cents: number;
  readonly total_in_cents: number;
  readonly paid_in_cents: number;
  readonly credits_in_cents: number;
  readonly invoice_uids: string[];
  readonly transaction_ids: number[];
}

/** The fields of a statement, unwrapped. */
export function statementJson(statement: StatementRecord, context: WireContext): StatementJson {
  // Settled means paid (as for the `statement_settled` webhook): closed, and the closing balance owes nothing.
  const settled = statement.closedAt !== null && statement.closingBalanceInCents <= 0;
  return {
    id: statement.id,
    subscription_id: statement.subscriptionId,
    customer_id: statement.customerId,
    period_index: statement.periodIndex,
    opened_at: wireTimestamp(statement.openedAt, context),
    closed_at: wireTimestamp(statement.closedAt, context),
    settled_at: settled ? wireTimestamp(statement.closedAt, context) : null,
    created_at: wireTimestamp(statement.openedAt, context),
    starting_balance_in_cents: statement.openingBalanceInCents,
    ending_balance_in_cents: statement.closingBalanceInCents,
    total_in_cents: statement.totalChargesInCents,
    paid_in_cents: statement.totalPaymentsInCents,
    credits_in_cents: statement.totalCreditsInCents,
    invoice_uids: [...statement.invoiceUids],
    transaction_ids: [...statement.transactionIds],
  };
}

/** `{"statement":{...}}`: `GET /statements/{id}.json`, and each item of a subscription's statement list. */
export function serializeStatement(statement: StatementRecord, context: WireContext): { statement: StatementJson } {
  return { statement: statementJson(statement, context) };
}
