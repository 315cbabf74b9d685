/**
 * Runs a statement whose constraint violation is an answer of the port ("a taken reference gives
 * `conflict`", "a customer with subscriptions is not deleted") rather than a failure, for the
 * writes that cannot use `ON CONFLICT DO NOTHING` (UPDATE, DELETE). On Postgres the statement
 * runs in a savepoint, so the violation leaves the transaction usable, as a failed statement does
 * on SQLite.
 */
import { BillingError } from 'billing-engine';
import { sql } from 'kysely';
import type { RepositoryContext } from './repository-context.js';

/** Which violation is the expected answer. */
export type ExpectedViolation = 'unique' | 'foreign_key';

/** Runs `statement`; the expected violation becomes `conflict()` without dooming the transaction. */
export async function withConstraintConflict<T>(
  { db, hooks, concurrentCommands }: RepositoryContext,
  expected: ExpectedViolation,
  conflict: () => BillingError,
  statement: () => Promise<T>,
): Promise<T> {
  const savepoint = hooks.failedStatementAbortsTransaction;
  if (savepoint && concurrentCommands === true) {
    // Other commands' statements run between ours on this connection, so rolling back to the
    // savepoint would undo theirs too. Refused before any statement: the caller runs this
    // command again alone (see `TransactionOptions.concurrentCommands`).
    throw new BillingError(
      'storage',
      'This statement needs a transaction of its own: it cannot run beside other commands in one transaction.',
      { data: { needsOwnTransaction: true } },
    );
  }
  if (savepoint) await sql.raw('savepoint billing_expected_conflict').execute(db);
  try {
    const result = await statement();
    if (savepoint) await sql.raw('release savepoint billing_expected_conflict').execute(db);
    return result;
  } catch (error) {
    const matches = expected === 'unique' ? hooks.isUniqueViolation(error) : hooks.isForeignKeyViolation(error);
    if (!matches) throw error;
    if (savepoint) {
      await sql.raw('rollback to savepoint billing_expected_conflict').execute(db);
      await sql.raw('release savepoint billing_expected_conflict').execute(db);
    }
    throw conflict();
  }
}
