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
import type { NewTransaction, StorageTransaction, TransactionRecord } from '../ports/storage.js';

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
  return written;
}
