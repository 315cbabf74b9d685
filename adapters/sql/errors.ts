/**
 * Driver errors become the engine's errors here: a unique-key violation is `conflict`, anything
 * else the database or driver reports is `storage` with the driver error as `cause` (port
 * conventions, `src/ports/storage.ts`).
 */
import { BillingError } from 'billing-engine';
import { type DialectHooks, isReadOnlyViolation } from './dialect-hooks.js';

/** Maps any error to a BillingError; BillingErrors pass through unchanged. */
export function toBillingError(error: unknown, hooks: DialectHooks): BillingError {
  if (error instanceof BillingError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  if (hooks.isUniqueViolation(error)) {
    const constraint = (error as { constraint?: unknown }).constraint;
    return new BillingError('conflict', 'A record with the same unique key already exists.', {
      cause: error,
      data: typeof constraint === 'string' ? { constraint } : { detail },
    });
  }
  if (isReadOnlyViolation(error)) {
    // A bug in the caller, not a database fault: say so plainly.
    return new BillingError('storage', `Write refused: this transaction is read-only (${detail})`, {
      cause: error,
      data: { readOnly: true },
    });
  }
  return new BillingError('storage', `Storage failure: ${detail}`, { cause: error });
}

/** What a guarded repository reports to the transaction it runs in. */
export interface TransactionGuard {
  /** Throws when the transaction has already committed or rolled back (a leaked `tx` used late). */
  assertOpen(): void;
  /** Records a failure the database saw and returns the error to throw in its place. */
  fail(error: unknown): BillingError;
}

/**
 * Wraps every method of a repository so that driver errors are mapped (and remembered by the
 * transaction, which then refuses to commit) and a repository used after its transaction ended
 * fails instead of running on a connection that another transaction may own by now.
 */
export function guardRepository<T extends object>(repository: T, guard: TransactionGuard): T {
  const guarded: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(repository)) {
    if (typeof member !== 'function') {
      guarded[name] = member;
      continue;
    }
    const method = member as (...args: unknown[]) => Promise<unknown>;
    guarded[name] = async (...args: unknown[]): Promise<unknown> => {
      guard.assertOpen();
      try {
        return await method.apply(repository, args);
      } catch (error) {
        // Answers a repository gives on purpose (a taken subdomain, an unsafe amount) are already
        // BillingErrors and leave the transaction usable; only database failures doom it.
        if (error instanceof BillingError) throw error;
        throw guard.fail(error);
      }
    };
  }
  return guarded as T;
}
