/**
 * The storage port on Kysely, shared by SQLite and Postgres. The dialect folders build a Kysely
 * instance and a {@link DialectHooks}; everything else (transactions, retries, error mapping,
 * migrations, repositories) lives here once.
 */
import {
  BillingError,
  type Storage,
  type StorageCapabilities,
  type StorageTransaction,
  type TransactionOptions,
} from 'billing-engine';
import { type DatabaseConnection, Kysely, sql } from 'kysely';
import { applyMigrations } from './apply-migrations.js';
import { createValueEncoders } from './codecs.js';
import { type DialectHooks, defaultReadOnlyBegin, type ReadConnection } from './dialect-hooks.js';
import { guardRepository, type TransactionGuard, toBillingError } from './errors.js';
import { createAccountsRepository, createExportsRepository } from './repositories/accounts.js';
import { createCatalogRepository } from './repositories/catalog.js';
import { createComponentsRepository } from './repositories/components.js';
import { createCouponsRepository } from './repositories/coupons.js';
import { createCredentialsRepository } from './repositories/credentials.js';
import { createCustomersRepository } from './repositories/customers.js';
import { createDirectCallsRepository } from './repositories/direct-calls.js';
import { createDueWorkRepository } from './repositories/due-work.js';
import { createIdempotencyRepository } from './repositories/idempotency.js';
import { createInvoicesRepository } from './repositories/invoices.js';
import { createLedgerRepository } from './repositories/ledger.js';
import { createMetafieldsRepository } from './repositories/metafields.js';
import { createMrrMovementsRepository } from './repositories/mrr-movements.js';
import { createNotesRepository } from './repositories/notes.js';
import { createOffersRepository } from './repositories/offers.js';
import { createOutboxRepository } from './repositories/outbox.js';
import { createPaymentAttemptsRepository } from './repositories/payments.js';
import { createPortalAccessRepository } from './repositories/portal-access.js';
import { createPricePointsRepository } from './repositories/price-points.js';
import { createProformaInvoicesRepository } from './repositories/proforma-invoices.js';
import { createPurgeRepository } from './repositories/purge.js';
import { TransactionCaches } from './repositories/read-cache.js';
import { createReportsRepository } from './repositories/reports.js';
import type { RepositoryContext } from './repositories/repository-context.js';
import { createSiteDataRepository } from './repositories/site-data.js';
import { createCouponSubcodesRepository, createReasonCodesRepository } from './repositories/site-extras.js';
import { createSitesRepository } from './repositories/sites.js';
import { createSubscriptionComponentsRepository } from './repositories/subscription-components.js';
import { createSubscriptionsRepository } from './repositories/subscriptions.js';
import { createWebhooksRepository } from './repositories/webhooks.js';
import type { Database } from './schema.js';

/** The repository factories of a transaction: adding a repository to the port adds one line here. */
const REPOSITORIES: { readonly [K in keyof StorageTransaction]: (ctx: RepositoryContext) => StorageTransaction[K] } = {
  sites: createSitesRepository,
  siteData: createSiteDataRepository,
  credentials: createCredentialsRepository,
  idempotency: createIdempotencyRepository,
  dueWork: createDueWorkRepository,
  outbox: createOutboxRepository,
  catalog: createCatalogRepository,
  customers: createCustomersRepository,
  subscriptions: createSubscriptionsRepository,
  ledger: createLedgerRepository,
  payments: createPaymentAttemptsRepository,
  components: createComponentsRepository,
  coupons: createCouponsRepository,
  metafields: createMetafieldsRepository,
  notes: createNotesRepository,
  subscriptionComponents: createSubscriptionComponentsRepository,
  webhooks: createWebhooksRepository,
  directCalls: createDirectCallsRepository,
  invoices: createInvoicesRepository,
  pricePoints: createPricePointsRepository,
  reasonCodes: createReasonCodesRepository,
  couponSubcodes: createCouponSubcodesRepository,
  accounts: createAccountsRepository,
  exports: createExportsRepository,
  proformaInvoices: createProformaInvoicesRepository,
  reports: createReportsRepository,
  purge: createPurgeRepository,
  portalAccess: createPortalAccessRepository,
  offers: createOffersRepository,
  mrrMovements: createMrrMovementsRepository,
};

/** Options of {@link createSqlStorage}. */
export interface SqlStorageOptions {
  /** The Kysely instance; the storage owns it and destroys it on `close()`. */
  readonly db: Kysely<Database>;
  readonly hooks: DialectHooks;
  readonly capabilities: StorageCapabilities;
  /**
   * Called by `close()` after Kysely is destroyed. Kysely only closes a database or pool it has
   * used, so the dialect releases its own here (idempotently) for a storage closed unused.
   */
  readonly release?: () => Promise<void> | void;
}

/**
 * Builds a {@link Storage} on a Kysely instance. Each `transaction()` takes one connection, opens
 * the transaction with the dialect's `begin` statement, builds the repositories on that
 * connection, and commits when `work` resolves. A retryable failure (serialization, deadlock)
 * runs the whole `work` again, up to `hooks.maxAttempts` times, so `work` must not have effects
 * outside the database (the engine never calls a gateway inside a transaction). A read-only
 * transaction (`{ readOnly: true }`) skips the writer queue, opens with the dialect's read-only
 * begin, and runs on a read connection when the dialect lends one (see `DialectHooks`).
 *
 * A statement the database rejects dooms its transaction, even when `work` catches the error:
 * Postgres refuses every later statement of an aborted transaction, and SQLite behaves the same
 * here so that both dialects agree. Answers a repository gives on purpose without failing a
 * statement (a taken subdomain, an existing schedule key, a held idempotency key) do not doom it.
 */
export function createSqlStorage(options: SqlStorageOptions): Storage {
  const { db, hooks, capabilities } = options;
  const encode = createValueEncoders(hooks.name);
  let closed = false;

  async function attempt<T>(
    txOptions: TransactionOptions | undefined,
    work: (conn: Kysely<Database>, scope: TransactionScope) => Promise<T>,
  ): Promise<T> {
    // Set once the error to report is final (from `work`, or an explained commit failure).
    let workFailed = false;
    const readOnly = txOptions?.readOnly === true;
    // A read-only transaction never queues behind writers: on its own connection when the dialect
    // lends one (SQLite WAL readers run beside the writer), else on the storage's connections.
    let reader: ReadConnection | undefined;
    let releaseWriter: (() => void) | undefined;
    try {
      if (readOnly) reader = await hooks.readConnection?.();
      else releaseWriter = await hooks.acquireWriter?.();
    } catch (error) {
      throw toBillingError(error, hooks);
    }
    const guard = readOnly && reader === undefined ? hooks.readOnlyGuard : undefined;
    const begin = readOnly
      ? (hooks.readOnlyBeginStatement?.(txOptions) ?? defaultReadOnlyBegin(hooks.name, txOptions))
      : hooks.beginStatement(txOptions);
    try {
      const onConnection = reader === undefined && hooks.pipelining === true ? pipelinedConnection : serialConnection;
      return await onConnection(reader?.db ?? db, async (conn) => {
        const scope = new TransactionScope(hooks);
        await sql.raw(begin).execute(conn);
        try {
          let result: T;
          try {
            if (guard !== undefined) await sql.raw(guard.enter).execute(conn);
            result = await work(conn, scope);
            scope.throwIfDoomed();
          } catch (error) {
            workFailed = true;
            scope.end();
            await rollbackQuietly(conn);
            throw error;
          }
          scope.end();
          try {
            await sql.raw('commit').execute(conn);
          } catch (error) {
            await rollbackQuietly(conn);
            workFailed = true;
            // A rejected COMMIT rolled back; a connection lost during COMMIT leaves the outcome
            // unknown to us, which is why payments are reconciled by key rather than retried blindly.
            throw new BillingError('storage', `Commit failed: ${messageOf(error)}`, {
              cause: error,
              data: { phase: 'commit' },
            });
          }
          return result;
        } finally {
          // The connection writes again for the next transaction; a dead one has nothing to undo.
          if (guard !== undefined)
            await sql
              .raw(guard.leave)
              .execute(conn)
              .catch(() => {});
        }
      });
    } catch (error) {
      // Errors of `work` reach the caller as they are; failures to connect or to begin are mapped.
      throw workFailed ? error : toBillingError(error, hooks);
    } finally {
      releaseWriter?.();
      reader?.release();
    }
  }

  async function run<T>(
    txOptions: TransactionOptions | undefined,
    work: (conn: Kysely<Database>, scope: TransactionScope) => Promise<T>,
  ): Promise<T> {
    if (closed) throw new BillingError('storage', 'The storage is closed.');
    for (let attemptNo = 1; ; attemptNo++) {
      try {
        return await attempt(txOptions, work);
      } catch (error) {
        if (attemptNo >= hooks.maxAttempts || !hooks.isRetryable(error)) throw error;
        // Jittered backoff so that the transactions that collided do not collide again in step.
        await sleep(Math.random() * 10 * 2 ** attemptNo);
      }
    }
  }

  return {
    capabilities,

    transaction(work, options) {
      const concurrentCommands = options?.concurrentCommands === true;
      return run(options, (conn, scope) => {
        const context: RepositoryContext = {
          db: conn,
          encode,
          hooks,
          caches: new TransactionCaches(),
          concurrentCommands,
        };
        return work(buildTransaction(context, scope));
      });
    },

    async migrate() {
      await run({ isolation: 'read_committed' }, (conn) => applyMigrations(conn, hooks, encode));
    },

    async close() {
      if (closed) return;
      closed = true;
      try {
        await db.destroy();
        await options.release?.();
      } catch (error) {
        throw toBillingError(error, hooks);
      }
    },
  };
}

/** The state of one open transaction, shared by its guarded repositories. */
class TransactionScope implements TransactionGuard {
  readonly #hooks: DialectHooks;
  #open = true;
  #failure: BillingError | undefined;

  constructor(hooks: DialectHooks) {
    this.#hooks = hooks;
  }

  assertOpen(): void {
    if (!this.#open) throw new BillingError('storage', 'This transaction has already ended.');
  }

  fail(error: unknown): BillingError {
    const mapped = toBillingError(error, this.#hooks);
    this.#failure ??= mapped;
    return mapped;
  }

  /** Refuses to commit after a failed statement (see {@link createSqlStorage}). */
  throwIfDoomed(): void {
    if (this.#failure === undefined) return;
    throw new BillingError(
      'storage',
      `Transaction rolled back: an earlier statement failed (${this.#failure.message})`,
      { cause: this.#failure },
    );
  }

  end(): void {
    this.#open = false;
  }
}

interface TransactionState {
  readonly context: RepositoryContext;
  readonly scope: TransactionScope;
  readonly built: Map<string, object>;
}

const STATE = Symbol('transaction state');

/**
 * The prototype of every `tx`: one lazy getter per repository, defined once. Repositories are
 * built on first use because a command touches a few of the many, and SQLite transactions are
 * short enough that building all of them each time would show in their cost.
 */
const TRANSACTION_PROTOTYPE: object = {};
for (const [name, create] of Object.entries(REPOSITORIES)) {
  Object.defineProperty(TRANSACTION_PROTOTYPE, name, {
    enumerable: true,
    get(this: { [STATE]: TransactionState }) {
      const state = this[STATE];
      let repository = state.built.get(name);
      if (repository === undefined) {
        repository = guardRepository((create as (ctx: RepositoryContext) => object)(state.context), state.scope);
        state.built.set(name, repository);
      }
      return repository;
    },
  });
}

function buildTransaction(context: RepositoryContext, scope: TransactionScope): StorageTransaction {
  const tx = Object.create(TRANSACTION_PROTOTYPE) as { [STATE]: TransactionState };
  tx[STATE] = { context, scope, built: new Map() };
  return tx as unknown as StorageTransaction;
}

/** Runs `work` on one connection whose statements Kysely runs one at a time, as `db.connection()` does. */
function serialConnection<T>(db: Kysely<Database>, work: (conn: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.connection().execute(work);
}

/**
 * Runs `work` on one connection whose statements go to the driver as they are issued. Kysely's
 * `db.connection()` queues each statement behind the answer of the one before, which is right for
 * a driver that can only run one at a time; a pipelining driver (a `pg` client in pipeline mode)
 * sends statements issued at once back to back and answers them in order, so independent
 * commands running at once in one transaction share round trips. Built from Kysely's public
 * executor API the way `ConnectionBuilder.execute` builds its own.
 */
function pipelinedConnection<T>(db: Kysely<Database>, work: (conn: Kysely<Database>) => Promise<T>): Promise<T> {
  const executor = db.getExecutor();
  return executor.provideConnection((connection: DatabaseConnection) => {
    const direct = executor.withConnectionProvider({ provideConnection: (consume) => consume(connection) });
    return work(new Kysely<Database>({ config: {}, driver: {}, dialect: {}, executor: direct } as never));
  });
}

async function rollbackQuietly(conn: Kysely<Database>): Promise<void> {
  try {
    await sql.raw('rollback').execute(conn);
  } catch {
    // The connection is gone or the transaction already ended; either way nothing was committed,
    // and the error worth reporting is the one that got us here.
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
