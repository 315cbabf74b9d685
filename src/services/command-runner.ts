import type { EventEmitterLike } from '../engine-deps.js';
import type { BillingEvent, EventKey } from '../events.js';
import type { Clock } from '../ports/clock.js';
import type { NewOutboxEvent, Storage, StorageTransaction, TransactionOptions } from '../ports/storage.js';

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
    const ctx: CommandContext = {
      tx,
      now: deps.clock.now(),
      record(event) {
        pending.push({ ...event, occurredAt: ctx.now });
      },
    };
    const value = await work(ctx);
    committed = pending.length > 0 ? ((await tx.outbox.append(pending)) as BillingEvent[]) : [];
    if (committed.length > 0 && deps.onEvents) await deps.onEvents(tx, committed, ctx.now);
    return value;
  }, options);
  for (const event of committed) deps.emitter.emit(event.key, event);
  return result;
}
