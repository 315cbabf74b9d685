/**
 * Statements: the classic per-period summary of a subscription, computed from its ledger and
 * invoices rather than stored. Period `k` opens at the first ledger line billed for period `k`
 * (the signup's or renewal's lines carry the period index) and closes where period `k + 1` opens;
 * a period that billed nothing (a free trial) opens where the one before it closed. Lines without
 * a period (payments, refunds, adjustments) belong to the period open when they were written.
 */
import type { SubscriptionRecord, TransactionRecord } from '../ports/storage.js';
import type { InvoiceRecord, StatementRecord } from './model.js';

/**
 * Statement ids are derived, not stored: the subscription id and the period index, so that
 * `statement(id)` finds its subscription without a table. Room for a million periods each.
 */
const PERIODS_PER_SUBSCRIPTION = 1_000_000;

export function statementId(subscriptionId: number, periodIndex: number): number {
  return subscriptionId * PERIODS_PER_SUBSCRIPTION + periodIndex;
}

/** The subscription a statement id belongs to, or undefined for an id no statement can have. */
export function statementSubscription(id: number): number | undefined {
  if (!Number.isSafeInteger(id) || id < PERIODS_PER_SUBSCRIPTION) return undefined;
  return Math.floor(id / PERIODS_PER_SUBSCRIPTION);
}

/** One statement per period from 0 to the subscription's current one, oldest first. */
export function computeStatements(
  subscription: SubscriptionRecord,
  lines: readonly TransactionRecord[],
  invoices: readonly InvoiceRecord[],
): StatementRecord[] {
  const ordered = [...lines].sort((a, b) => a.id - b.id);
  const last = Math.max(subscription.periodIndex, ...ordered.map((l) => l.periodIndex ?? 0));
  // The id of the first line of each period: where that period opens.
  const opensAtLine: (number | undefined)[] = [];
  for (const l of ordered) {
    if (l.periodIndex !== null && opensAtLine[l.periodIndex] === undefined) opensAtLine[l.periodIndex] = l.id;
  }
  const statements: StatementRecord[] = [];
  let cursor = 0;
  let balance = 0;
  let openedAt = subscription.createdAt;
  for (let k = 0; k <= last; k++) {
    // The period runs until the first line of a later period.
    let end = ordered.length;
    for (let j = k + 1; j <= last; j++) {
      const first = opensAtLine[j];
      if (first !== undefined) {
        end = ordered.findIndex((l) => l.id === first);
        break;
      }
    }
    const inPeriod = k === last ? ordered.slice(cursor) : ordered.slice(cursor, Math.max(cursor, end));
    if (inPeriod[0] !== undefined && opensAtLine[k] !== undefined) openedAt = inPeriod[0].createdAt;
    const opening = balance;
    let charges = 0;
    let credits = 0;
    let payments = 0;
    for (const l of inPeriod) {
      const delta = l.endingBalanceInCents - l.startingBalanceInCents;
      if (l.type === 'payment') payments += -delta;
      else if (delta > 0) charges += delta;
      else credits += -delta;
      balance = l.endingBalanceInCents;
    }
    const next = k === last ? undefined : ordered[end];
    const ids = new Set(inPeriod.map((l) => l.id));
    statements.push({
      id: statementId(subscription.id, k),
      subscriptionId: subscription.id,
      customerId: subscription.customerId,
      periodIndex: k,
      openedAt,
      closedAt: k === last ? null : (next?.createdAt ?? openedAt),
      openingBalanceInCents: opening,
      closingBalanceInCents: balance,
      invoiceUids: invoices
        .filter((i) => i.lineItems.some((item) => item.transactionId !== null && ids.has(item.transactionId)))
        .map((i) => i.uid),
      transactionIds: inPeriod.map((l) => l.id),
      totalChargesInCents: charges,
      totalPaymentsInCents: payments,
      totalCreditsInCents: credits,
    });
    cursor += inPeriod.length;
    if (next) openedAt = next.createdAt;
  }
  return statements;
}
