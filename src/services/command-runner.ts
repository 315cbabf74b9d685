import type { EventEmitterLike } from '../engine-deps.js';
import type { BillingEvent, EventKey } from '../events.js';
import { deferInvoiceNumbering, numberDeferredInvoices } from '../invoices/issuing.js';
import type { Clock } from '../ports/clock.js';
import type { NewOutboxEvent, Storage, StorageTransaction, TransactionOptions } from '../ports/storage.js';
import { type MrrSubject, recordMrrMovements } from './mrr-movements.js';

/** What a command sees: its transaction, the one instant it runs at, and a place to record events. */
export interface CommandContext {
  readonly tx: StorageTransaction;
  /** Read once per command, so every row and event a command writes carries the same instant. */
  readonly now: Date;
  /** Records an event; it is written to the outbox when the command's work returns. */
  record(event: {
    siteId: number;
    key: EventKey;
    subjectType: string;
    subjectId: number;
    payload: Record<string, unknown>;
  }): void;
  /**
   * Marks a subscription whose MRR the command may have changed without recording an event about
   * it (a coupon added or removed): its MRR is compared with its last movement as for an event's
   * (see `mrr-movements.ts`). Optional: a context that only reads has none.
   */
  touchMrr?(siteId: number, subscriptionId: number): void;
}

/** A subscription {@link CommandContext.touchMrr} marked, as the MRR recorder reads events. */
function touched(siteId: number, subscriptionId: number): MrrSubject {
  return { siteId, key: 'mrr_touch', subjectType: 'subscription', subjectId: subscriptionId };
}

/** The dependencies of {@link runCommand}. */
export interface CommandDeps {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly emitter: EventEmitterLike;
  /**
   * Called inside the command's transaction with the events it appended to the outbox, so that
   * work derived from events (webhook deliveries) commits with them or not at all.
   */
  readonly onEvents?: (tx: StorageTransaction, events: readonly BillingEvent[], now: Date) => Promise<void>;
}

/**
 * Runs one engine command in one transaction: the state change and its outbox events commit
 * together or not at all, and listeners hear the events only after the commit.
 */
export async function runCommand<T>(
  deps: CommandDeps,
  work: (ctx: CommandContext) => Promise<T>,
  options?: TransactionOptions,
): Promise<T> {
  let committed: BillingEvent[] = [];
  const result = await deps.storage.transaction(async (tx) => {
    const pending: NewOutboxEvent[] = [];
    const marked: MrrSubject[] = [];
    const ctx: CommandContext = {
      tx,
      now: deps.clock.now(),
      record(event) {
        pending.push({ ...event, occurredAt: ctx.now });
      },
      touchMrr(siteId, subscriptionId) {
        marked.push(touched(siteId, subscriptionId));
      },
    };
    const value = await work(ctx);
    // The MRR history of the subscriptions the events concern, in the same transaction.
    if (pending.length > 0 || marked.length > 0) await recordMrrMovements(tx, [...pending, ...marked], ctx.now);
    committed = pending.length > 0 ? ((await tx.outbox.append(pending)) as BillingEvent[]) : [];
    if (committed.length > 0 && deps.onEvents) await deps.onEvents(tx, committed, ctx.now);
    return value;
  }, options);
  for (const event of committed) deps.emitter.emit(event.key, event);
  return result;
}

/** Options of {@link CommandBatcher}. */
export interface CommandBatcherOptions {
  /** The most commands one transaction runs (default 64). */
  readonly maxBatch?: number;
  /**
   * The most batch transactions open at once (default 4 on a storage with concurrent
   * transactions, else 1). Commands submitted while they are all busy wait and form the next batch.
   */
  readonly maxInFlight?: number;
  /**
   * While a batch is committing, the next one starts only once this many commands wait (default
   * 8); with none in flight, any waiting command starts at once. Without it, on a storage with
   * concurrent transactions, each of the few transactions in flight would take the one or two
   * commands that arrived since the last began, and pay a transaction's fixed statements (begin,
   * commit, the outbox lock, the site and webhook reads) for each of them (issue 18).
   */
  readonly minBatchWhileBusy?: number;
}

interface QueuedCommand {
  readonly now: Date;
  readonly work: (ctx: CommandContext) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit for many small, independent commands (the steps of due work, issue 18): commands
 * submitted while earlier batches are committing run together in one transaction, each with its
 * own instant, context and events, so that what a transaction costs whatever it does (begin and
 * commit with its flush to disk, the outbox lock, the webhook fan-out's reads, the hold of the
 * invoice counter) is paid once per batch rather than once per command.
 *
 * Every guarantee of {@link runCommand} holds per command: a command's promise settles only after
 * the transaction holding its changes has committed (so a payment attempt is durable before the
 * gateway is called), its events are appended in that transaction and heard after the commit. The
 * commands of one batch must not depend on each other (due work: one item per subscription at a
 * time). When a batch fails, each of its commands runs again alone, so one failing command never
 * sinks the others and its error reaches its own caller only. Invoices issued in a batch take
 * their numbers at its end ({@link deferInvoiceNumbering}), still gap-free.
 */
export class CommandBatcher {
  readonly #deps: CommandDeps;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  readonly #minBatchWhileBusy: number;
  readonly #queue: QueuedCommand[] = [];
  #inFlight = 0;

  constructor(deps: CommandDeps, options: CommandBatcherOptions = {}) {
    this.#deps = deps;
    this.#maxBatch = Math.max(1, Math.floor(options.maxBatch ?? 64));
    this.#maxInFlight = Math.max(
      1,
      Math.floor(options.maxInFlight ?? (deps.storage.capabilities.concurrentTransactions ? 4 : 1)),
    );
    this.#minBatchWhileBusy = Math.min(this.#maxBatch, Math.max(1, Math.floor(options.minBatchWhileBusy ?? 8)));
  }

  /** Runs `work` as a command at instant `now`, in the next batch; settles once that batch has committed. */
  run<T>(now: Date, work: (ctx: CommandContext) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ now, work, resolve: resolve as (value: unknown) => void, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (
      this.#inFlight < this.#maxInFlight &&
      this.#queue.length > 0 &&
      (this.#inFlight === 0 || this.#queue.length >= this.#minBatchWhileBusy)
    ) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      this.#inFlight += 1;
      void this.#runBatch(batch).finally(() => {
        this.#inFlight -= 1;
        this.#pump();
      });
    }
  }

  async #runBatch(batch: readonly QueuedCommand[]): Promise<void> {
    let done: { values: unknown[]; events: BillingEvent[] };
    try {
      // On a pipelining storage the commands of a batch run at once: a round trip then carries a
      // statement of each instead of one (they are independent: one item per subscription).
      const together = batch.length > 1 && this.#deps.storage.capabilities.pipelining === true;
      done = await this.#deps.storage.transaction(
        (tx) => this.#inTransaction(tx, batch, together),
        together ? { concurrentCommands: true } : undefined,
      );
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      // Nothing of the batch committed: each command again, alone, so that only the failing one fails.
      await Promise.all(batch.map((command) => this.#runBatch([command])));
      return;
    }
    for (const event of done.events) this.#deps.emitter.emit(event.key, event);
    for (const [k, command] of batch.entries()) command.resolve(done.values[k]);
  }

  /** One attempt of a batch's transaction (the storage may run it again after a deadlock). */
  async #inTransaction(
    tx: StorageTransaction,
    batch: readonly QueuedCommand[],
    together: boolean,
  ): Promise<{ values: unknown[]; events: BillingEvent[] }> {
    deferInvoiceNumbering(tx);
    // Each command's events apart, joined in batch order: the outbox order does not depend on
    // how the commands' statements interleaved.
    const recorded: NewOutboxEvent[][] = batch.map(() => []);
    const runOne = async (command: QueuedCommand, own: NewOutboxEvent[]): Promise<unknown> => {
      const marked: MrrSubject[] = [];
      const ctx: CommandContext = {
        tx,
        now: command.now,
        record(event) {
          own.push({ ...event, occurredAt: ctx.now });
        },
        touchMrr(siteId, subscriptionId) {
          marked.push(touched(siteId, subscriptionId));
        },
      };
      const value = await command.work(ctx);
      // Each command's MRR movements at its own instant, after its own work.
      if (own.length > 0 || marked.length > 0) await recordMrrMovements(tx, [...own, ...marked], ctx.now);
      return value;
    };
    const values: unknown[] = [];
    if (together) {
      // Every command finishes before the batch does, even after one failed: none may still be
      // issuing statements while the transaction rolls back and its connection goes back to the pool.
      const settled = await Promise.allSettled(batch.map((command, k) => runOne(command, recorded[k]!)));
      for (const outcome of settled) {
        if (outcome.status === 'rejected') throw outcome.reason;
        values.push(outcome.value);
      }
    } else {
      for (const [k, command] of batch.entries()) values.push(await runOne(command, recorded[k]!));
    }
    const pending = recorded.flat();
    // Last, so that the invoice counter is held for these few statements and the commit only.
    await numberDeferredInvoices(tx);
    const events = pending.length > 0 ? ((await tx.outbox.append(pending)) as BillingEvent[]) : [];
    if (events.length > 0 && this.#deps.onEvents) {
      // One fan-out per instant: the webhooks it makes carry their command's instant.
      for (let start = 0; start < events.length; ) {
        const at = events[start]!.occurredAt.getTime();
        let end = start + 1;
        while (end < events.length && events[end]!.occurredAt.getTime() === at) end += 1;
        await this.#deps.onEvents(tx, events.slice(start, end), events[start]!.occurredAt);
        start = end;
      }
    }
    return { values, events };
  }
}
