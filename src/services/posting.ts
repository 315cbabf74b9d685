/**
 * The one place ledger lines are written. Every charge, credit, adjustment, payment and refund of
 * every command (signup, renewal, dunning, migration, allocation, one-time charge, refund,
 * reactivation) goes through {@link post}, inside the command's transaction, so what is billed is
 * recorded in one spot: the invoices built from the lines attach here (`invoices/issuing.ts`), and
 * a rule every line must keep is checked once. `test/architecture.test.ts` keeps other services
 * from appending to the ledger directly.
 */
import { balanceDelta } from '../domain/ledger/balance-delta.js';
import { BillingError } from '../errors.js';
import { attachDocuments, type DocumentOptions } from '../invoices/issuing.js';
import type { NewTransaction, StorageTransaction, SubscriptionRecord, TransactionRecord } from '../ports/storage.js';
import { isPrepaid, prepaidConfigurationOf } from './prepaid-configuration.js';

export type { DocumentOptions } from '../invoices/issuing.js';

/**
 * Appends `lines` to the ledger in the caller's transaction, in order, and returns them as stored.
 * Each line's balance movement must be the one its type and amount imply; a line that breaks this
 * is a bug in the command that built it, refused before anything is written. The billed lines
 * (charges, credits, coupon and prorated adjustments) become one invoice; payments pay open
 * invoices; refunds of invoice payments issue credit notes (see `invoices/issuing.ts`).
 */
export async function post(
  tx: StorageTransaction,
  lines: readonly NewTransaction[],
  documents: DocumentOptions = {},
): Promise<TransactionRecord[]> {
  if (lines.length === 0) return [];
  for (const line of lines) {
    if (
      !Number.isSafeInteger(line.amountInCents) ||
      line.balanceDeltaInCents !== balanceDelta(line.type, line.amountInCents)
    ) {
      throw new BillingError(
        'internal',
        `A ${line.type} line of ${line.amountInCents} moves the balance by ${line.balanceDeltaInCents}; refused.`,
      );
    }
  }
  const written = await tx.ledger.append(lines);
  await attachDocuments(tx, written, documents);
  await scheduleReplenishmentAfterDraw(tx, written);
  return written;
}

/** The payload type of a prepaid replenishment's due work (a `reconcile_payment` row; see `prepaid-service.ts`). */
export const PREPAID_REPLENISHMENT = 'prepaid_replenishment';

/**
 * After lines that drew on a subscription's credit (it had credit before them, and they raised its
 * balance), a prepaid subscription that auto-replenishes gets a replenishment check, in the same
 * transaction: a `reconcile_payment` row due at once whose key names the first line, so one draw
 * schedules one check, and the row stays until the check's charge is settled (a crash or a lost
 * answer brings it back, under the same attempt key). The check itself decides whether the
 * prepayment balance is below the threshold. Lines of a subscription without credit before them
 * cannot have drawn on a prepayment, so the subscription is read only when they could have.
 */
async function scheduleReplenishmentAfterDraw(tx: StorageTransaction, written: readonly TransactionRecord[]) {
  const first = written[0];
  if (first === undefined) return;
  if (first.startingBalanceInCents >= 0) return;
  if (
    !written.some((l) => l.subscriptionId === first.subscriptionId && l.endingBalanceInCents > l.startingBalanceInCents)
  )
    return;
  const subscription = await tx.subscriptions.findById(first.siteId, first.subscriptionId);
  if (subscription === undefined || !prepaidConfigurationOf(subscription)?.autoReplenish) return;
  await scheduleReplenishmentCheck(tx, subscription, `${first.id}`, first.createdAt);
}

/**
 * Schedules a replenishment check of a prepaid subscription (see {@link scheduleReplenishmentAfterDraw});
 * `cause` makes its key (and its charge's attempt key) unique: the line that drew, or the signup.
 */
export async function scheduleReplenishmentCheck(
  tx: StorageTransaction,
  subscription: Pick<SubscriptionRecord, 'id' | 'siteId'>,
  cause: string,
  now: Date,
): Promise<void> {
  const key = `prepaid_replenishment:${subscription.id}:${cause}`;
  await tx.dueWork.schedule({
    siteId: subscription.siteId,
    kind: 'reconcile_payment',
    // Subject 0, never an attempt's id: flows cancel an attempt's reconciliation by its subject.
    subjectId: 0,
    dueAt: now,
    uniqueKey: key,
    payload: { type: PREPAID_REPLENISHMENT, subscriptionId: subscription.id, key },
  });
}

/**
 * The subscription data key of its payments whose outcome is not known yet (`{ key: amount }`): an
 * allocation charge collected at once commits its lines, its attempt and this entry together, and
 * settling the attempt removes the entry. Until then the gateway may or may not have taken that
 * amount, so the part of the balance it covers is not the balance's to collect.
 */
export const UNSETTLED_PAYMENTS = 'unsettledPayments';

/** The payments of a subscription whose outcome is not known yet, by attempt key ({@link UNSETTLED_PAYMENTS}). */
export function unsettledPayments(data: Readonly<Record<string, unknown>>): Record<string, number> {
  const out: Record<string, number> = {};
  const held = data[UNSETTLED_PAYMENTS];
  if (held === null || typeof held !== 'object') return out;
  for (const [key, amount] of Object.entries(held as Record<string, unknown>)) {
    if (typeof amount === 'number' && Number.isSafeInteger(amount) && amount > 0) out[key] = amount;
  }
  return out;
}

/**
 * The remittance rule, for every flow that would charge a subscription (signup, renewal, dunning
 * retry, migration, allocation, one-time charge): only a subscription collected `automatic`ally
 * is ever charged by the engine. A `remittance` subscription's invoices are issued and left open
 * for the customer to pay (an external payment, a prepayment, or the invoice card-payment path,
 * which the customer starts), so its flows find nothing to collect, and with nothing collected
 * nothing can fail: no dunning starts for it. Flows ask through {@link collectableBalance} and
 * {@link collectableAmount} what they may charge, never by reading the field themselves.
 */
export function collectsAutomatically(subscription: CollectionSubject): boolean {
  return subscription.paymentCollectionMethod !== 'remittance' && !isPrepaid(subscription);
}

/**
 * What the collection rule reads of a subscription: its method and, for `prepaid` (a configuration
 * in its data, see `prepaid-configuration.ts`), its data. A prepaid subscription is collected like
 * remittance here: its charges are paid from its credit (its prepayment balance), what the balance
 * cannot cover is left open on its invoice, and the card is charged only to fund the balance.
 */
export type CollectionSubject = Pick<SubscriptionRecord, 'paymentCollectionMethod'> & {
  readonly data?: Readonly<Record<string, unknown>>;
};

/**
 * What a flow may charge of `amountInCents` it would collect now from the subscription: all of it
 * under automatic collection, none under remittance or prepaid ({@link collectsAutomatically}).
 */
export function collectableAmount(subscription: CollectionSubject, amountInCents: number): number {
  return collectsAutomatically(subscription) ? amountInCents : 0;
}

/**
 * What a collection of a subscription's balance may take: the balance less the amounts of its
 * payments whose outcome is not known yet. Collecting those too would take the same money twice
 * when the lost answer was a success; if the reconciliation finds the money was not taken, the
 * amount stays owed and the next collection of the balance takes it. A remittance (or prepaid)
 * subscription's debt is never collectable ({@link collectsAutomatically}); its credit still counts (a negative
 * result), since a flow pays its charges from credit before it would charge a card.
 */
export function collectableBalance(
  balanceInCents: number,
  subscription: Pick<SubscriptionRecord, 'data' | 'paymentCollectionMethod'>,
): number {
  const held = Object.values(unsettledPayments(subscription.data)).reduce((sum, amount) => sum + amount, 0);
  const collectable = balanceInCents - held;
  return collectsAutomatically(subscription) ? collectable : Math.min(0, collectable);
}
