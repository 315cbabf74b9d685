/**
 * What every repository factory receives: the Kysely instance bound to the transaction's one
 * connection, the dialect's encoders and hooks. Repositories are built per transaction, so they
 * can never run a statement outside it.
 */
import type { Kysely } from 'kysely';
import type { ValueEncoders } from '../codecs.js';
import type { DialectHooks } from '../dialect-hooks.js';
import type { Database } from '../schema.js';
import type { TransactionCaches } from './read-cache.js';

/** The transaction-scoped dependencies of a repository. */
export interface RepositoryContext {
  /** Runs on the transaction's connection only. */
  readonly db: Kysely<Database>;
  readonly encode: ValueEncoders;
  readonly hooks: DialectHooks;
  /** Read caches of this transaction shared between repositories (see `read-cache.ts`). */
  readonly caches: TransactionCaches;
  /**
   * Several independent commands run at once on this transaction's connection
   * (`TransactionOptions.concurrentCommands`): a savepoint would cover the others' statements too.
   */
  readonly concurrentCommands?: boolean;
}
