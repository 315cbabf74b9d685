/**
 * How the document events raised inside `post()` (`invoice_issued`, `invoice_voided`,
 * `credit_note_created`) reach the outbox, the webhooks and in-process listeners. `post()` gets
 * only the transaction, not the command's context, so the engine wraps its storage: each
 * transaction gets a sink the documents record into, and before the transaction commits the sink
 * is fanned out to webhooks, exactly like a command's own events; the listeners hear them after
 * the commit.
 */
import type { BillingEvent, EventKey } from '../events.js';
import type { NewOutboxEvent, Storage, StorageTransaction } from '../ports/storage.js';
import type { InvoiceRecord } from './model.js';
import { invoiceSummary } from './payloads.js';

/**
 * The document events appended through each transaction object, and how many of them a finished
 * transaction has already taken for its fan-out and listeners. One object may serve several
 * engine transactions (the preview runs every command of a call in one), so each takes what was
 * recorded since the last one took, and every event is fanned out and heard exactly once.
 */
const sinks = new WeakMap<StorageTransaction, { events: BillingEvent[]; taken: number }>();

/**
 * Appends a document event to the outbox at once, so that it takes its place among the command's
 * events in the order things happened (an invoice is issued before the payment that pays it is
 * reported), and remembers it for the fan-out and the listeners. A transaction of an unwrapped
 * storage (a test driving the posting module directly) gets the outbox row only.
 */
export async function recordDocumentEvent(tx: StorageTransaction, event: NewOutboxEvent): Promise<void> {
  await recordDocumentEvents(tx, [event]);
}

/** {@link recordDocumentEvent} for several events, in order, in one append. */
export async function recordDocumentEvents(tx: StorageTransaction, events: readonly NewOutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  const appended = (await tx.outbox.append(events)) as BillingEvent[];
  sinks.get(tx)?.events.push(...appended);
}

/** What the wrapper needs of the engine. */
export interface DocumentEventHooks {
  /** Webhook fan-out of events appended in the transaction. */
  fanOut(tx: StorageTransaction, events: readonly BillingEvent[], now: Date): Promise<void>;
  /** Tells in-process listeners, after the commit. */
  emit(key: EventKey, event: BillingEvent): void;
}

/** The storage the engine's services use: `storage` with document events flushed in every transaction. */
export function withDocumentEvents(storage: Storage, hooks: DocumentEventHooks): Storage {
  return {
    capabilities: storage.capabilities,
    migrate: () => storage.migrate(),
    close: () => storage.close(),
    async transaction(work, options) {
      let committed: BillingEvent[] = [];
      const value = await storage.transaction(async (tx) => {
        let sink = sinks.get(tx);
        if (sink === undefined) {
          sink = { events: [], taken: 0 };
          sinks.set(tx, sink);
        }
        committed = [];
        const result = await work(tx);
        const mine = sink.events.slice(sink.taken);
        sink.taken = sink.events.length;
        if (mine.length > 0) await hooks.fanOut(tx, mine, mine[0]!.occurredAt);
        committed = mine;
        return result;
      }, options);
      for (const event of committed) hooks.emit(event.key, event);
      return value;
    },
  };
}

/** More invoices than one payment can pay at one instant in any real book. */
const PAID_INVOICES_SEARCHED = 200;

/**
 * A payment event with the invoice it concerns, for its webhooks: a success carries the invoice
 * its payment line paid first, a failure the subscription's oldest open invoice (the one a retry
 * would pay). Events of other keys, and payments that paid no invoice, are returned as they are.
 * The webhook fan-out asks only for events some endpoint wants, so a site without endpoints never
 * pays for the lookup.
 */
export async function withPaymentInvoice(tx: StorageTransaction, event: BillingEvent): Promise<BillingEvent> {
  if ((event.key !== 'payment_success' && event.key !== 'payment_failure') || event.subjectType !== 'subscription') {
    return event;
  }
  const transaction = event.payload.transaction as { id?: unknown } | undefined;
  // Bounded reads, so that the cost does not grow with the subscription's history: the invoice
  // a payment paid was changed by that payment's own post, at the event's instant; a failure
  // names the oldest open invoice.
  const invoice: InvoiceRecord | undefined =
    event.key === 'payment_success'
      ? (
          await tx.invoices.list(event.siteId, {
            subscriptionId: event.subjectId,
            instants: { field: 'updated_at', from: event.occurredAt },
            direction: 'asc',
            offset: 0,
            limit: PAID_INVOICES_SEARCHED,
          })
        ).invoices.find((i) => i.payments.some((p) => p.transactionId === transaction?.id))
      : (await tx.invoices.listForSubscription(event.siteId, event.subjectId, 'open'))[0];
  return invoice ? { ...event, payload: { ...event.payload, invoice: invoiceSummary(invoice) } } : event;
}
