import type { BillingEvent } from '../events.js';
import type { ChargeResult, PaymentGateway, RefundResult, TokenizeResult } from '../ports/gateway.js';
import type { LedgerRepository, Storage, StorageTransaction, TransactionRecord } from '../ports/storage.js';

/** What a previewed command would do. Nothing of it was kept. */
export interface PreviewResult<T> {
  /** What the command returned. */
  readonly result: T;
  /** The ledger lines it would write, in order. */
  readonly ledger: readonly TransactionRecord[];
  /** The events it would record, in order. */
  readonly events: readonly Pick<BillingEvent, 'key' | 'subjectType' | 'subjectId' | 'payload'>[];
  /** The charges it would send to the gateway (a preview assumes every charge succeeds). */
  readonly charges: readonly { idempotencyKey: string; amountInCents: number; currency: string }[];
  /** The refunds it would send. */
  readonly refunds: readonly { idempotencyKey: string; amountInCents: number }[];
}

/** Thrown to roll {@link rolledBack}'s transaction back once its work is done. */
class RolledBack<T> extends Error {
  constructor(readonly result: T) {
    super('rolled back');
  }
}

/** Runs `work` in a transaction of `storage` that is always rolled back, and returns what it returned. */
export async function rolledBack<T>(storage: Storage, work: (tx: StorageTransaction) => Promise<T>): Promise<T> {
  try {
    await storage.transaction(async (tx) => {
      throw new RolledBack(await work(tx));
    });
  } catch (error) {
    if (error instanceof RolledBack) return error.result as T;
    throw error;
  }
  throw new Error('unreachable: the transaction always rolls back');
}

/**
 * Runs `command` against a storage whose every transaction is one outer transaction that is
 * always rolled back, with a gateway that approves every charge without contacting anything.
 * `build` makes an engine-like object over that storage and gateway, so the command runs through
 * exactly the code a real call runs; the effects are collected on the way.
 */
export async function previewCommand<
  E extends { on(key: '*', listener: (event: BillingEvent) => void): () => void },
  T,
>(
  storage: Storage,
  build: (storage: Storage, gateway: PaymentGateway) => E,
  command: (engine: E) => Promise<T>,
): Promise<PreviewResult<T>> {
  const ledger: TransactionRecord[] = [];
  const events: PreviewResult<T>['events'][number][] = [];
  const gateway = simulatedGateway();
  return rolledBack(storage, async (outer) => {
    const tx = capturingLedger(outer, ledger);
    const inner: Storage = {
      capabilities: storage.capabilities,
      // Every engine transaction runs inside the outer one; commits are only in name.
      transaction: (work) => work(tx),
      migrate: async () => {},
      close: async () => {},
    };
    const engine = build(inner, gateway);
    engine.on('*', (event) =>
      events.push({
        key: event.key,
        subjectType: event.subjectType,
        subjectId: event.subjectId,
        payload: event.payload,
      }),
    );
    const result = await command(engine);
    return {
      result,
      ledger: [...ledger],
      events: [...events],
      charges: [...gateway.charges],
      refunds: [...gateway.refunds],
    };
  });
}

function capturingLedger(tx: StorageTransaction, captured: TransactionRecord[]): StorageTransaction {
  const ledger = new Proxy(tx.ledger, {
    get(target, property, receiver) {
      if (property === 'append') {
        return async (lines: Parameters<LedgerRepository['append']>[0]) => {
          const written = await target.append(lines);
          captured.push(...written);
          return written;
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return new Proxy(tx, {
    get(target, property, receiver) {
      return property === 'ledger' ? ledger : Reflect.get(target, property, receiver);
    },
  });
}

/** A gateway that approves everything and remembers what it was asked. */
function simulatedGateway(): PaymentGateway & {
  charges: { idempotencyKey: string; amountInCents: number; currency: string }[];
  refunds: { idempotencyKey: string; amountInCents: number }[];
} {
  const charges: { idempotencyKey: string; amountInCents: number; currency: string }[] = [];
  const refunds: { idempotencyKey: string; amountInCents: number }[] = [];
  return {
    name: 'preview',
    supportsRefunds: true,
    charges,
    refunds,
    async tokenize(card): Promise<TokenizeResult> {
      const digits = card.fullNumber.replace(/\D/g, '');
      return {
        ok: true,
        vaultToken: 'preview',
        customerVaultToken: null,
        cardType: 'bogus',
        lastFour: digits.slice(-4).padStart(4, '0'),
      };
    },
    async charge(request): Promise<ChargeResult> {
      charges.push({
        idempotencyKey: request.idempotencyKey,
        amountInCents: request.amountInCents,
        currency: request.currency,
      });
      return { outcome: 'success', transactionId: `preview-${charges.length}` };
    },
    async refund(request): Promise<RefundResult> {
      refunds.push({ idempotencyKey: request.idempotencyKey, amountInCents: request.amountInCents });
      return { outcome: 'success', transactionId: `preview-refund-${refunds.length}` };
    },
    async lookup() {
      return undefined;
    },
  };
}
