import { type PurgeRepository, type PurgeSummary, SUBSCRIPTION_WORK_KINDS } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import { Journal, type MemoryTable } from '../memory-table.js';

const isOpen = (status: string) => status === 'pending' || status === 'unknown';

/**
 * Puts a table's rows back in id order. A rolled-back delete puts its row back at the end of the
 * table, and reads that scan a table (a subscription's ledger, the outbox after an id) answer in
 * stored order, so a purge that rolls back must leave the order as it found it. Rows are moved
 * with a scratch journal: this runs during a rollback, which must not record changes of its own.
 */
function restoreIdOrder<T extends { readonly id: number }>(table: MemoryTable<T>): void {
  const rows = [...table.scan()];
  if (rows.every((row, i) => i === 0 || rows[i - 1]!.id < row.id)) return;
  const scratch = new Journal();
  for (const row of rows.sort((a, b) => a.id - b.id)) {
    table.delete(scratch, row.id);
    table.insert(scratch, row);
  }
}

/** Purging one subscription from the memory tables (the same rows as the SQL adapter; see the port). */
export function memoryPurge(state: MemoryState, journal: Journal): PurgeRepository {
  const { accountTables } = state;
  return {
    async openPaymentAttempts(siteId, subscriptionId, customerId) {
      return state.payments.filter(
        (p) =>
          p.siteId === siteId &&
          isOpen(p.status) &&
          (p.subscriptionId === subscriptionId ||
            (customerId !== null && p.subscriptionId === null && p.customerId === customerId)),
      );
    },

    async purgeSubscription(siteId, subscriptionId, options) {
      const subscription = state.subscriptions.peek(subscriptionId);
      if (subscription === undefined || subscription.siteId !== siteId) return undefined;
      const customerId = subscription.customerId;
      // First in the journal, so last on a rollback: after every deleted row is back.
      journal.push(() => {
        restoreIdOrder(state.dueWork);
        restoreIdOrder(state.webhooks);
        restoreIdOrder(state.outbox);
        restoreIdOrder(state.invoiceEvents);
        restoreIdOrder(state.creditNotes);
        restoreIdOrder(state.invoices);
        restoreIdOrder(accountTables.accountEntries);
        restoreIdOrder(state.proformaTables.proformaInvoices);
        restoreIdOrder(state.mrrMovementTables.mrrMovements);
        restoreIdOrder(state.usages);
        restoreIdOrder(state.allocations);
        restoreIdOrder(state.subscriptionComponents);
        restoreIdOrder(state.notes);
        restoreIdOrder(state.metadata);
        restoreIdOrder(state.transactions);
        restoreIdOrder(state.payments);
        restoreIdOrder(state.subscriptions);
        restoreIdOrder(state.paymentProfiles);
        restoreIdOrder(state.customers);
        restoreIdOrder(state.productVersions);
        restoreIdOrder(state.pricePointTables.productPricePoints);
        restoreIdOrder(state.portalAccessTables.access);
      });
      const removeCustomer =
        options.customer &&
        state.subscriptions.count(
          (s) => s.siteId === siteId && s.customerId === customerId && s.id !== subscriptionId,
        ) === 0;

      const lineIds = new Set(
        state.transactions.filter((t) => t.siteId === siteId && t.subscriptionId === subscriptionId).map((t) => t.id),
      );
      const ownsAttempt = (p: {
        siteId: number;
        subscriptionId: number | null;
        customerId: number | null;
        transactionId: number | null;
      }) =>
        p.siteId === siteId &&
        (p.subscriptionId === subscriptionId ||
          (p.transactionId !== null && lineIds.has(p.transactionId)) ||
          (removeCustomer && p.subscriptionId === null && p.customerId === customerId));
      const attemptIds = new Set(state.payments.filter(ownsAttempt).map((p) => p.id));
      const invoices = state.invoices.filter((i) => i.siteId === siteId && i.subscriptionId === subscriptionId);
      const invoiceIds = new Set(invoices.map((i) => i.id));
      const invoiceUids = new Set(invoices.map((i) => i.uid));
      const creditNoteIds = new Set(
        state.creditNotes.filter((n) => n.siteId === siteId && n.subscriptionId === subscriptionId).map((n) => n.id),
      );
      const eventIds = new Set(
        state.outbox
          .filter(
            (e) =>
              e.siteId === siteId &&
              ((e.subjectType === 'subscription' && e.subjectId === subscriptionId) ||
                (e.subjectType === 'payment_attempt' && attemptIds.has(e.subjectId)) ||
                (e.subjectType === 'invoice' && invoiceIds.has(e.subjectId)) ||
                (e.subjectType === 'credit_note' && creditNoteIds.has(e.subjectId)) ||
                (removeCustomer && e.subjectType === 'customer' && e.subjectId === customerId)),
          )
          .map((e) => e.id),
      );
      const webhookIds = new Set(
        state.webhooks
          .filter((w) => w.siteId === siteId && w.eventId !== null && eventIds.has(w.eventId))
          .map((w) => w.id),
      );

      // Rows whose subject is not what makes them the subscription's are found by their key (see
      // `PurgeSummary.dueWork`): its prepaid replenishment checks (subject 0) and its mail jobs.
      const mailOf = (r: { kind: string; uniqueKey: string }, mail: string) =>
        r.kind === 'mail_delivery' && r.uniqueKey.startsWith(`mail:${mail}:`);
      const dueWork = state.dueWork.deleteWhere(
        journal,
        (r) =>
          r.siteId === siteId &&
          ((SUBSCRIPTION_WORK_KINDS.includes(r.kind) && r.subjectId === subscriptionId) ||
            (r.kind === 'reconcile_payment' && attemptIds.has(r.subjectId)) ||
            (r.kind === 'reconcile_payment' && r.uniqueKey.startsWith(`prepaid_replenishment:${subscriptionId}:`)) ||
            (r.kind === 'webhook_delivery' && webhookIds.has(r.subjectId)) ||
            (mailOf(r, 'payment_update_request') && r.subjectId === subscriptionId) ||
            (mailOf(r, 'invoice') && invoiceIds.has(r.subjectId)) ||
            (removeCustomer && mailOf(r, 'portal_invitation') && r.subjectId === customerId)),
      );
      const webhooks = state.webhooks.deleteWhere(journal, (w) => webhookIds.has(w.id));
      const events = state.outbox.deleteWhere(journal, (e) => eventIds.has(e.id));
      const invoiceEvents = state.invoiceEvents.deleteWhere(
        journal,
        (e) => e.siteId === siteId && invoiceUids.has(e.invoiceUid),
      );
      const creditNotes = state.creditNotes.deleteWhere(journal, (n) => creditNoteIds.has(n.id));
      const invoiceCount = state.invoices.deleteWhere(journal, (i) => invoiceIds.has(i.id));
      const ofSubscription = (r: { siteId: number; subscriptionId: number }) =>
        r.siteId === siteId && r.subscriptionId === subscriptionId;
      const accountEntries = accountTables.accountEntries.deleteWhere(journal, ofSubscription);
      // Proforma invoices of the subscription, and a removed customer's signup proformas.
      state.proformaTables.proformaInvoices.deleteWhere(
        journal,
        (p) =>
          p.siteId === siteId &&
          (p.subscriptionId === subscriptionId ||
            (removeCustomer && p.subscriptionId === null && p.customerId === customerId)),
      );
      state.mrrMovementTables.mrrMovements.deleteWhere(journal, ofSubscription);
      const usages = state.usages.deleteWhere(journal, ofSubscription);
      const allocations = state.allocations.deleteWhere(journal, ofSubscription);
      const subscriptionComponents = state.subscriptionComponents.deleteWhere(journal, ofSubscription);
      const notes = state.notes.deleteWhere(journal, ofSubscription);
      const metadata = state.metadata.deleteWhere(
        journal,
        (m) =>
          m.siteId === siteId &&
          ((m.resourceType === 'subscription' && m.resourceId === subscriptionId) ||
            (removeCustomer && m.resourceType === 'customer' && m.resourceId === customerId)),
      );
      const ledgerLines = state.transactions.deleteWhere(journal, (t) => lineIds.has(t.id));
      const previousLast = state.lastLine.get(subscriptionId);
      if (previousLast !== undefined) {
        state.lastLine.delete(subscriptionId);
        journal.push(() => state.lastLine.set(subscriptionId, previousLast));
      }
      const paymentAttempts = state.payments.deleteWhere(journal, (p) => attemptIds.has(p.id));
      const subscriptions = state.subscriptions.deleteWhere(journal, (s) => s.id === subscriptionId);
      // Its custom price points and the product versions holding their terms.
      const pricePoints = state.pricePointTables.productPricePoints;
      const customIds = new Set(
        pricePoints
          .filter((p) => p.siteId === siteId && p.type === 'custom' && p.subscriptionId === subscriptionId)
          .map((p) => p.id),
      );
      state.productVersions.deleteWhere(
        journal,
        (v) => v.siteId === siteId && typeof v.pricePointId === 'number' && customIds.has(v.pricePointId),
      );
      const customPricePoints = pricePoints.deleteWhere(journal, (p) => customIds.has(p.id));

      let paymentProfiles = 0;
      if (removeCustomer || options.paymentProfiles) {
        const inUse = new Set(
          state.subscriptions
            .filter((s) => s.siteId === siteId && s.paymentProfileId !== null)
            .map((s) => s.paymentProfileId),
        );
        paymentProfiles = state.paymentProfiles.deleteWhere(
          journal,
          (p) => p.siteId === siteId && p.customerId === customerId && (removeCustomer || !inUse.has(p.id)),
        );
      }
      if (removeCustomer) {
        state.customers.delete(journal, customerId);
        // SQL removes it with the customer (a cascade).
        state.portalAccessTables.access.deleteWhere(journal, (r) => r.siteId === siteId && r.customerId === customerId);
      }

      const summary: PurgeSummary = {
        subscriptions,
        ledgerLines,
        paymentAttempts,
        subscriptionComponents,
        allocations,
        usages,
        notes,
        metadata,
        invoices: invoiceCount,
        creditNotes,
        invoiceEvents,
        accountEntries,
        dueWork,
        events,
        webhooks,
        paymentProfiles,
        customPricePoints,
        customerRemoved: removeCustomer,
      };
      return summary;
    },
  };
}
