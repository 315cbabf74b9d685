import type { ChargeResult, PaymentGateway } from '../ports/gateway.js';
import type { PaymentAttemptRecord } from '../ports/storage.js';

/** What identifies a payment attempt about to be made. */
export interface PendingAttemptFields {
  readonly siteId: number;
  readonly subscriptionId: number | null;
  readonly customerId: number | null;
  /** Deterministic: the same key never charges twice (DESIGN §3). */
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
 * Calls the gateway for an attempt that is already committed, outside any transaction. A thrown
 * gateway call is an unknown outcome: the caller records it and reconciles by key later, never
 * charging again blindly. An attempt seen before is first looked up by its key.
 */
export async function chargeAttempt(
  gateway: PaymentGateway,
  attempt: PaymentAttemptRecord,
  vault: { vaultToken: string; customerVaultToken: string | null },
  description: string,
): Promise<ChargeResult> {
  try {
    if (attempt.status === 'unknown') {
      const known = await gateway.lookup(attempt.idempotencyKey);
      if (known !== undefined) return known;
    }
    return await gateway.charge({
      idempotencyKey: attempt.idempotencyKey,
      amountInCents: attempt.amountInCents,
      currency: attempt.currency,
      vaultToken: vault.vaultToken,
      customerVaultToken: vault.customerVaultToken,
      description,
    });
  } catch (error) {
    return { outcome: 'unknown', message: error instanceof Error ? error.message : String(error) };
  }
}
