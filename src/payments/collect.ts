/**
 * The one collection path: every flow that takes money (signup, renewal, dunning
 * retry, one-time charge, migration, allocation, reactivation) commits a pending attempt with a
 * deterministic key, calls the gateway here, outside any transaction, and commits the outcome.
 * This module owns the gateway call and the one recovery rule for lost answers; the flows own
 * what their attempt pays for and what its outcome changes.
 *
 * The recovery rule: an attempt already settled is never sent again (its recorded outcome is the
 * answer); a lost answer (a thrown call, or `unknown`) leaves the attempt `unknown`, and from then
 * on it is only ever asked about by its key ({@link lookUpByKey}, {@link reconcileByKey}), never
 * charged under a new key. A command whose caller is waiting (signup, migration, allocation) looks
 * up once at once, and money found taken completes it; due work (renewal, dunning) does not wait:
 * its item comes back an hour later and asks then, so a lane is not held by an unanswering gateway.
 * An attempt resumed after a crash (still `pending`) is sent again under its own key, which the
 * gateway answers once.
 */
import type { ChargeResult, PaymentGateway } from '../ports/gateway.js';
import type {
  PaymentAttemptRecord,
  PaymentAttemptStatus,
  Storage,
  StorageTransaction,
  SubscriptionRecord,
} from '../ports/storage.js';

/** Where a charge is taken from: the payment profile's vault tokens. */
export interface ChargeVault {
  readonly vaultToken: string;
  readonly customerVaultToken: string | null;
}

/** A committed attempt about to be collected, and what it is collected from. */
export interface PendingCharge {
  readonly attempt: PaymentAttemptRecord;
  /** Undefined when no payment profile is on file: the collection fails without a gateway call. */
  readonly vault: ChargeVault | undefined;
  /** What the gateway records as the charge's description. */
  readonly description: string;
  /**
   * Whether a lost answer is looked up by key at once (a caller is waiting for the outcome);
   * otherwise the attempt is left `unknown` for its reconciliation. Default true.
   */
  readonly lookUpLostAnswer?: boolean;
}

/** Step one's answer: either nothing to collect (the flow's result) or a committed attempt to collect. */
export type CollectionStart<Plan, Result> =
  | { readonly done: Result }
  | { readonly charge: PendingCharge; readonly plan: Plan };

/** The two committing steps of a collection; {@link collect} runs the gateway call between them. */
export interface CollectionSteps<Plan, Result> {
  /** Step 1, in its own transaction: commits the pending attempt (or finds it) and its reconciliation. */
  begin(): Promise<CollectionStart<Plan, Result>>;
  /** Step 3, in its own transaction: commits the outcome once (an attempt settled meanwhile is left as it is). */
  settle(charge: PendingCharge, plan: Plan, result: ChargeResult): Promise<Result>;
}

/**
 * Runs the three steps of a payment: the attempt committed before the gateway is called, the call
 * made outside any transaction under {@link callGateway}'s recovery rule, the outcome committed
 * after. A process that dies between the steps leaves a committed attempt that its flow resumes
 * or reconciles by key.
 */
export async function collect<Plan, Result>(
  gateway: PaymentGateway,
  steps: CollectionSteps<Plan, Result>,
): Promise<Result> {
  const start = await steps.begin();
  if ('done' in start) return start.done;
  const result = await callGateway(gateway, start.charge);
  return steps.settle(start.charge, start.plan, result);
}

/** Statuses of an attempt whose outcome is not committed yet. */
export function isOpenAttempt(status: PaymentAttemptStatus): boolean {
  return status === 'pending' || status === 'unknown';
}

/** The outcome an attempt already committed, or undefined while it is open. */
export function recordedOutcome(attempt: PaymentAttemptRecord): ChargeResult | undefined {
  if (attempt.status === 'succeeded' && attempt.gatewayTransactionId !== null) {
    return { outcome: 'success', transactionId: attempt.gatewayTransactionId };
  }
  if (attempt.status === 'declined') return { outcome: 'declined', message: attempt.message ?? 'Declined.' };
  if (attempt.status === 'failed') return { outcome: 'error', message: attempt.message ?? 'Failed.' };
  return undefined;
}

/**
 * Step 2 of every payment, under the recovery rule of this module: a settled attempt answers from
 * its record; an `unknown` one is first looked up by key; a lost answer is looked up once more
 * before `unknown` is returned. Never throws: a gateway failure is an `unknown` outcome.
 */
export async function callGateway(gateway: PaymentGateway, charge: PendingCharge): Promise<ChargeResult> {
  const { attempt, vault } = charge;
  const recorded = recordedOutcome(attempt);
  if (recorded !== undefined) return recorded;
  if (vault === undefined) return { outcome: 'error', message: 'No payment profile on file.' };
  if (attempt.status === 'unknown') {
    // Still no answer (`unknown`): nothing is sent until the gateway can say what became of the
    // first call. No record of the key: the first call never arrived, so it is sent now, same key.
    const known = await lookUpByKey(gateway, attempt.idempotencyKey);
    if (known !== undefined) return known;
  }
  let result: ChargeResult;
  try {
    result = await gateway.charge({
      idempotencyKey: attempt.idempotencyKey,
      amountInCents: attempt.amountInCents,
      currency: attempt.currency,
      vaultToken: vault.vaultToken,
      customerVaultToken: vault.customerVaultToken,
      description: charge.description,
    });
  } catch (error) {
    result = { outcome: 'unknown', message: error instanceof Error ? error.message : String(error) };
  }
  if (result.outcome !== 'unknown' || charge.lookUpLostAnswer === false) return result;
  // A lost answer to a charge that went through is common: one look by key before giving up.
  const known = await lookUpByKey(gateway, attempt.idempotencyKey);
  return known?.outcome === 'success' ? known : result;
}

/**
 * The gateway's answer for a charge key: its outcome, undefined when it never saw the key, or
 * `unknown` when it cannot be asked right now (a thrown lookup).
 */
export async function lookUpByKey(gateway: PaymentGateway, key: string): Promise<ChargeResult | undefined> {
  try {
    return await gateway.lookup(key);
  } catch (error) {
    return { outcome: 'unknown', message: error instanceof Error ? error.message : 'No response from the gateway.' };
  }
}

/** The key of a subscription's renewal charge for one period: one charge per period, whichever worker runs it. */
export function renewalAttemptKey(subscriptionId: number, periodIndex: number): string {
  return `renewal:${subscriptionId}:${periodIndex}`;
}

/**
 * The amount of the renewal charge of the subscription's current period while its attempt is
 * still open (0 once settled, or when there was none). Its due item normally runs before any
 * later work of the subscription; when a command canceled that item under the charge (a worker
 * that died after the gateway call, or whose answer was lost), the charge may have been taken and
 * a collection of the balance leaves its amount out until the attempt is settled, as it leaves out
 * an allocation's unsettled payment.
 */
export async function openRenewalAmount(
  tx: StorageTransaction,
  subscription: Pick<SubscriptionRecord, 'siteId' | 'id' | 'periodIndex'>,
): Promise<number> {
  if (subscription.periodIndex < 1) return 0;
  const open = await tx.payments.findByKey(
    subscription.siteId,
    renewalAttemptKey(subscription.id, subscription.periodIndex),
  );
  return open !== undefined && isOpenAttempt(open.status) ? open.amountInCents : 0;
}

/** The message of an attempt a reconciliation found the gateway never saw (so nothing was taken). */
export const NOT_SEEN_BY_GATEWAY = 'The gateway has no record of the charge.';

/** What a reconciliation learned about an attempt whose outcome was never committed. */
export type ReconciliationFinding =
  /** The attempt was settled meanwhile (by its command or another reconciliation): nothing to do. */
  | { readonly kind: 'settled' }
  /** The gateway cannot be asked yet: look again later. */
  | { readonly kind: 'unknown' }
  /** What the gateway knows: the charge's outcome, or an `error` when it never saw the key. */
  | { readonly kind: 'known'; readonly attempt: PaymentAttemptRecord; readonly result: ChargeResult };

/**
 * The shared prologue of every reconciliation of a lost answer: the attempt by key (settled
 * already: nothing to do), then the gateway by the same key, never a new charge.
 */
export async function reconcileByKey(
  storage: Storage,
  gateway: PaymentGateway,
  siteId: number,
  key: string,
): Promise<ReconciliationFinding> {
  const attempt = await storage.transaction((tx) => tx.payments.findByKey(siteId, key));
  if (attempt === undefined || !isOpenAttempt(attempt.status)) return { kind: 'settled' };
  const known = await lookUpByKey(gateway, key);
  if (known?.outcome === 'unknown') return { kind: 'unknown' };
  return {
    kind: 'known',
    attempt,
    result: known ?? { outcome: 'error', message: NOT_SEEN_BY_GATEWAY },
  };
}

/** The gateway's own limit on charges in flight, when it declares one ({@link PaymentGateway.maxConcurrentCharges}). */
export function gatewayConcurrency(gateway: PaymentGateway): number | undefined {
  const limit = gateway.maxConcurrentCharges;
  return typeof limit === 'number' && Number.isFinite(limit) && limit >= 1 ? Math.floor(limit) : undefined;
}
