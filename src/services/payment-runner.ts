import { BillingError } from '../errors.js';
import { type ChargeVault, callGateway } from '../payments/collect.js';
import type { ChargeResult, PaymentGateway } from '../ports/gateway.js';
import type { PaymentAttemptRecord, StorageTransaction } from '../ports/storage.js';

/** What identifies a payment attempt about to be made. */
export interface PendingAttemptFields {
  readonly siteId: number;
  readonly subscriptionId: number | null;
  readonly customerId: number | null;
  /** Deterministic: the same key never charges twice. */
  readonly idempotencyKey: string;
  readonly amountInCents: number;
  readonly currency: string;
  readonly purpose: string;
  readonly now: Date;
}

/**
 * A new payment attempt, pending: step one of every payment (signup, renewal, dunning, one-time
 * charge, migration, allocation), committed before the gateway is called.
 */
export function pendingAttempt({ now, ...fields }: PendingAttemptFields): Omit<PaymentAttemptRecord, 'id'> {
  return {
    ...fields,
    status: 'pending',
    gatewayTransactionId: null,
    message: null,
    transactionId: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Step 2 of a payment for an attempt that is already committed, for a flow that looks a lost
 * answer up itself (the one-time charge): {@link callGateway} of src/payments/collect.ts, the one
 * gateway call and recovery rule, without its immediate lookup. Never throws.
 */
export function chargeAttempt(
  gateway: PaymentGateway,
  attempt: PaymentAttemptRecord,
  vault: ChargeVault | undefined,
  description: string,
): Promise<ChargeResult> {
  return callGateway(gateway, { attempt, vault, description, lookUpLostAnswer: false });
}

/**
 * {@link callGateway} for a command that commits its effect only after the charge (a signup): a
 * lost answer is looked up once by key before the caller reports a failure, so a charge the
 * gateway did take completes the command instead of waiting for reconciliation.
 */
export function chargeOrLookUp(
  gateway: PaymentGateway,
  attempt: PaymentAttemptRecord,
  vault: ChargeVault | undefined,
  description: string,
): Promise<ChargeResult> {
  return callGateway(gateway, { attempt, vault, description });
}

/** How long after a payment attempt its reconciliation row falls due, if its outcome was never committed. */
export const RECONCILE_AFTER_MS = 60 * 60_000;

/**
 * Schedules the reconciliation of an attempt in the transaction that commits it (a
 * `reconcile_payment` row whose subject is the attempt and whose payload is the plan to settle
 * it); the outcome step cancels it. Only a crash or an unanswered gateway call leaves it pending.
 */
export async function scheduleReconciliation(
  tx: StorageTransaction,
  attempt: PaymentAttemptRecord,
  plan: Readonly<Record<string, unknown>>,
  now: Date,
): Promise<void> {
  await tx.dueWork.schedule({
    siteId: attempt.siteId,
    kind: 'reconcile_payment',
    subjectId: attempt.id,
    dueAt: new Date(now.getTime() + RECONCILE_AFTER_MS),
    uniqueKey: `reconcile:${attempt.idempotencyKey}`,
    payload: { ...plan },
  });
}

/**
 * The reconciliation plan of a payment made for a command that commits its effect only after the
 * charge (a signup, a migration): if the outcome was never committed, the command's effect never
 * happened, so money the gateway took for it is given back.
 */
export interface UncommittedPaymentPlan {
  readonly type: 'uncommitted';
  readonly key: string;
  readonly amountInCents: number;
  readonly currency: string;
  /**
   * The open-collection claim the command held while this payment's outcome was unknown; the
   * reconciliation releases it once the money is settled (refunded or found never taken).
   */
  readonly claim?: string;
}

/** Schedules an {@link UncommittedPaymentPlan} for a just-inserted attempt, in the same transaction. */
export function scheduleRefundIfUncommitted(
  tx: StorageTransaction,
  attempt: PaymentAttemptRecord,
  now: Date,
  claim?: string,
): Promise<void> {
  const plan: UncommittedPaymentPlan = {
    type: 'uncommitted',
    key: attempt.idempotencyKey,
    amountInCents: attempt.amountInCents,
    currency: attempt.currency,
    ...(claim === undefined ? {} : { claim }),
  };
  return scheduleReconciliation(tx, attempt, { ...plan }, now);
}

/** The idempotency scope of open-collection claims. */
export const OPEN_COLLECTION_SCOPE = 'open_collection';

/**
 * How long an open-collection claim holds when its command never releases it (the process died
 * between the charge and its outcome): past the reconciliation of the attempt it guarded, which
 * settles or refunds that money, so a later command never collects beside an unsettled one.
 */
export const OPEN_COLLECTION_HOLD_MS = 2 * RECONCILE_AFTER_MS;

/** The claim subject of a subscription's collections (migrations, allocations, reactivations). */
export function subscriptionCollection(subscriptionId: number): string {
  return `subscription:${subscriptionId}`;
}

/** The claim subject of a signup for a customer reference (one signup per reference at a time). */
export function customerReferenceCollection(reference: string): string {
  return `customer_reference:${reference}`;
}

/**
 * Makes a command that collects money exclusive for its subject, in the transaction that commits
 * its payment attempt, so before the gateway is called: of any number of concurrent commands on one
 * subscription (or one customer reference), one gets the claim and charges; the others are refused
 * with `conflict` (409) and take no money. The command's outcome step releases the claim with
 * {@link releaseOpenCollection}; a claim left by a dead process lapses after
 * {@link OPEN_COLLECTION_HOLD_MS}.
 */
export async function claimOpenCollection(
  tx: StorageTransaction,
  siteId: number,
  subject: string,
  now: Date,
  refusal = 'Another payment for this subscription is in progress; nothing was charged. Try again when it has finished.',
): Promise<void> {
  const claimed = await tx.idempotency.claim(
    siteId,
    OPEN_COLLECTION_SCOPE,
    subject,
    now,
    new Date(now.getTime() + OPEN_COLLECTION_HOLD_MS),
  );
  if (!claimed) {
    throw new BillingError('conflict', refusal);
  }
}

/** Ends an open-collection claim taken by {@link claimOpenCollection} (in the outcome step). */
export async function releaseOpenCollection(tx: StorageTransaction, siteId: number, subject: string): Promise<void> {
  await tx.idempotency.release(siteId, OPEN_COLLECTION_SCOPE, subject);
}
