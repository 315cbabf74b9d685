/**
 * Which part of a subscription's credit belongs to which account (prepayments, service credits),
 * worked out from its ledger and its account entries; balances are never stored (see
 * docs/decisions.md, "Prepayments, service credits and exports"). Kept apart from the account
 * service so that the subscription reads can show the prepayment balance without importing the
 * commands (which import the subscription service).
 */
import type { AccountEntryRecord, StorageTransaction, TransactionRecord } from '../ports/storage.js';

/** The state of a subscription's accounts computed from its ledger and its account entries. */
export interface AccountState {
  readonly serviceCreditInCents: number;
  readonly prepayments: ReadonlyMap<number, { readonly remainingInCents: number; readonly refundedInCents: number }>;
  /** Entries that took more than their account held at their line (refused by the command that wrote them). */
  readonly overdrawn: ReadonlySet<number>;
}

/**
 * Replays a subscription's ledger to tell which part of its credit belongs to which account.
 *
 * The money is in the ledger: a prepayment is a `payment` line, a service credit a `credit` line,
 * a deduction or a prepayment refund an `adjustment` that gives the credit back. The subscription's
 * credit (a negative balance) pays its charges as they are billed, whatever the credit came from;
 * so after each line the accounts together hold at most the credit left, and what a charge took is
 * taken from the service credit first, then from the oldest prepayments (as the service applies
 * service credits before prepayments). Other credit (a manual credit, an overpayment) is used
 * last. Replaying from the start means money once used never comes back to an account when the
 * balance later falls again for another reason.
 */
export function replayAccounts(
  lines: readonly TransactionRecord[],
  entries: readonly AccountEntryRecord[],
): AccountState {
  const byTransaction = new Map(entries.map((e) => [e.transactionId, e]));
  let serviceCredit = 0;
  // Prepayments in the order they were received: the oldest is used first.
  const buckets = new Map<number, { remainingInCents: number; refundedInCents: number }>();
  const overdrawn = new Set<number>();
  for (const l of [...lines].sort((a, b) => a.id - b.id)) {
    const entry = byTransaction.get(l.id);
    if (entry !== undefined) {
      switch (entry.entryType) {
        case 'prepayment':
          buckets.set(entry.id, { remainingInCents: entry.amountInCents, refundedInCents: 0 });
          break;
        case 'prepayment_refund': {
          const bucket = buckets.get(entry.prepaymentId ?? -1);
          if (bucket === undefined || bucket.remainingInCents < entry.amountInCents) overdrawn.add(entry.id);
          if (bucket !== undefined) {
            bucket.remainingInCents -= Math.min(bucket.remainingInCents, entry.amountInCents);
            bucket.refundedInCents += entry.amountInCents;
          }
          break;
        }
        case 'credit':
          serviceCredit += entry.amountInCents;
          break;
        case 'debit':
          if (serviceCredit < entry.amountInCents) overdrawn.add(entry.id);
          serviceCredit -= Math.min(serviceCredit, entry.amountInCents);
          break;
      }
    }
    const credit = Math.max(0, -l.endingBalanceInCents);
    let held = serviceCredit;
    for (const bucket of buckets.values()) held += bucket.remainingInCents;
    let used = held - credit;
    if (used > 0) {
      const fromCredit = Math.min(serviceCredit, used);
      serviceCredit -= fromCredit;
      used -= fromCredit;
      for (const bucket of buckets.values()) {
        if (used === 0) break;
        const take = Math.min(bucket.remainingInCents, used);
        bucket.remainingInCents -= take;
        used -= take;
      }
    }
  }
  return { serviceCreditInCents: serviceCredit, prepayments: buckets, overdrawn };
}

/** What the prepayments of an account state still hold, in minor units. */
export function prepaymentTotal(state: AccountState): number {
  let total = 0;
  for (const bucket of state.prepayments.values()) total += bucket.remainingInCents;
  return total;
}

/**
 * A subscription's prepayment balance (`prepayment_balance_in_cents`): what its prepayments still
 * hold, as `GET /subscriptions/{id}/account_balances.json` shows it. A subscription without a
 * prepayment entry has none, so its ledger is read only when it has one.
 */
export async function prepaymentBalance(
  tx: StorageTransaction,
  siteId: number,
  subscriptionId: number,
): Promise<number> {
  const entries = await tx.accounts.listForSubscription(siteId, subscriptionId);
  if (!entries.some((e) => e.entryType === 'prepayment')) return 0;
  return prepaymentTotal(replayAccounts(await tx.ledger.listForSubscription(siteId, subscriptionId), entries));
}
