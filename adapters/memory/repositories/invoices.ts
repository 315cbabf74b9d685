import { BillingError, type InvoiceEventRecord, type InvoiceRecord, type InvoicesRepository } from 'billing-engine';
import { keyOf, type MemoryState } from '../memory-state.js';
import { copy, type Journal } from '../memory-table.js';

function conflict(what: string): BillingError {
  return new BillingError('conflict', `${what} is already taken.`);
}

function page<T>(rows: T[], direction: 'asc' | 'desc', offset: number, limit: number): T[] {
  const ordered = direction === 'desc' ? rows.reverse() : rows;
  return ordered.slice(offset, offset + limit);
}

/** How many numbers one `nextSequence` takes: a positive whole number. */
function sequenceCount(count: number): number {
  if (!Number.isSafeInteger(count) || count < 1)
    throw new RangeError(`nextSequence takes a positive whole count, not ${count}.`);
  return count;
}

/** Invoices, credit notes and invoice events over the memory tables. */
export function memoryInvoices(state: MemoryState, journal: Journal): InvoicesRepository {
  const bySequence = (a: { sequenceNumber: number }, b: { sequenceNumber: number }) =>
    a.sequenceNumber - b.sequenceNumber;
  // Issued invoices by number, then drafts (no number yet) by id.
  const byNumber = (a: InvoiceRecord, b: InvoiceRecord) =>
    a.sequenceNumber === null || b.sequenceNumber === null
      ? (a.sequenceNumber === null ? 1 : 0) - (b.sequenceNumber === null ? 1 : 0) || a.id - b.id
      : a.sequenceNumber - b.sequenceNumber;
  return {
    async nextSequence(siteId, series, count = 1) {
      // Writers are serialised by the storage's mutex and a rollback undoes the journal, so a
      // plain counter row is gap-free here.
      const taken = sequenceCount(count);
      const key = keyOf(siteId, series);
      const row = state.documentSequences.findIndexed(state.documentSequencesByKey, key, () => true);
      if (row === undefined) {
        state.documentSequences.insert(journal, { id: state.documentSequences.nextId(), siteId, series, last: taken });
        return taken;
      }
      state.documentSequences.replace(journal, { ...row, last: row.last + taken });
      return row.last + taken;
    },
    async insert(invoice) {
      if (state.invoices.findIndexed(state.invoicesByUid, keyOf(invoice.siteId, invoice.uid), () => true))
        throw conflict('Invoice uid');
      if (
        invoice.sequenceNumber !== null &&
        state.invoices.find((i) => i.siteId === invoice.siteId && i.sequenceNumber === invoice.sequenceNumber)
      )
        throw conflict('Invoice number');
      return state.invoices.insert(journal, { ...invoice, id: state.invoices.nextId() });
    },
    async update(invoice) {
      const stored = state.invoices.peek(invoice.id);
      if (stored === undefined || stored.siteId !== invoice.siteId) return undefined;
      const numbered = stored.sequenceNumber === null && invoice.sequenceNumber !== null;
      if (
        numbered &&
        state.invoices.find((i) => i.siteId === invoice.siteId && i.sequenceNumber === invoice.sequenceNumber)
      )
        throw conflict('Invoice number');
      return state.invoices.replace(journal, {
        ...invoice,
        uid: stored.uid,
        number: numbered ? invoice.number : stored.number,
        sequenceNumber: numbered ? invoice.sequenceNumber : stored.sequenceNumber,
        createdAt: stored.createdAt,
      });
    },
    async deleteDraft(siteId, id) {
      const stored = state.invoices.peek(id);
      if (stored === undefined || stored.siteId !== siteId || stored.status !== 'draft') return false;
      return state.invoices.delete(journal, id);
    },
    async findById(siteId, id) {
      const invoice = state.invoices.get(id);
      return invoice?.siteId === siteId ? invoice : undefined;
    },
    async findByUid(siteId, uid) {
      return state.invoices.findIndexed(state.invoicesByUid, keyOf(siteId, uid), (i) => i.uid === uid);
    },
    async listForSubscription(siteId, subscriptionId, status) {
      return state.invoices
        .filterIndexed(
          state.invoicesBySubscription,
          keyOf(siteId, subscriptionId),
          (i) => status === undefined || i.status === status,
        )
        .sort(byNumber);
    },
    async list(siteId, filter) {
      // The stored rows are matched, ordered and paged as they are; only the page is copied, so a
      // page of a subscription with thousands of invoices costs a page, not thousands of copies.
      const matches: InvoiceRecord[] = [];
      const consider = (invoice: InvoiceRecord | undefined) => {
        if (invoice !== undefined && invoice.siteId === siteId && matchesFilter(invoice, filter)) matches.push(invoice);
      };
      if (filter.subscriptionId !== undefined) {
        for (const id of state.invoicesBySubscription.ids(keyOf(siteId, filter.subscriptionId))) {
          consider(state.invoices.peek(id));
        }
      } else {
        for (const invoice of state.invoices.scan()) consider(invoice);
      }
      matches.sort(byNumber);
      return {
        invoices: page(matches, filter.direction, filter.offset, filter.limit).map((invoice) => copy(invoice)),
        total: matches.length,
      };
    },
    async insertCreditNote(note) {
      if (state.creditNotes.find((n) => n.siteId === note.siteId && n.uid === note.uid))
        throw conflict('Credit note uid');
      if (state.creditNotes.find((n) => n.siteId === note.siteId && n.sequenceNumber === note.sequenceNumber))
        throw conflict('Credit note number');
      return state.creditNotes.insert(journal, { ...note, id: state.creditNotes.nextId() });
    },
    async findCreditNoteByUid(siteId, uid) {
      return state.creditNotes.find((n) => n.siteId === siteId && n.uid === uid);
    },
    async listCreditNotes(siteId, filter) {
      const matches = state.creditNotes
        .filter(
          (n) =>
            n.siteId === siteId &&
            (filter.subscriptionId === undefined || n.subscriptionId === filter.subscriptionId) &&
            (filter.invoiceUid === undefined || n.invoiceUid === filter.invoiceUid),
        )
        .sort(bySequence);
      return { creditNotes: page(matches, filter.direction, filter.offset, filter.limit), total: matches.length };
    },
    async appendEvent(siteId, event) {
      const row = state.invoiceEvents.insert(journal, { ...event, siteId, id: state.invoiceEvents.nextId() });
      return withoutSite(row);
    },
    async appendEvents(siteId, events) {
      return events.map((event) =>
        withoutSite(state.invoiceEvents.insert(journal, { ...event, siteId, id: state.invoiceEvents.nextId() })),
      );
    },
    async listEvents(siteId, invoiceUid) {
      return state.invoiceEvents
        .filter((e) => e.siteId === siteId && e.invoiceUid === invoiceUid)
        .sort((a, b) => a.id - b.id)
        .map(withoutSite);
    },
  };
}

function withoutSite(row: InvoiceEventRecord & { readonly siteId: number }): InvoiceEventRecord {
  const { siteId: _siteId, ...event } = row;
  return event;
}

function matchesFilter(invoice: InvoiceRecord, filter: Parameters<InvoicesRepository['list']>[1]): boolean {
  if (filter.status !== undefined && invoice.status !== filter.status) return false;
  if (filter.subscriptionId !== undefined && invoice.subscriptionId !== filter.subscriptionId) return false;
  if (filter.customerId !== undefined && invoice.customerId !== filter.customerId) return false;
  if (filter.number !== undefined && invoice.number !== filter.number) return false;
  if (filter.localDates) {
    const { field, from, to } = filter.localDates;
    const value =
      field === 'issue_date' ? invoice.issueDate : field === 'due_date' ? invoice.dueDate : invoice.paidDate;
    if (value === null) return false;
    if (from !== undefined && value < from) return false;
    if (to !== undefined && value > to) return false;
  }
  if (filter.instants) {
    const { field, from, until } = filter.instants;
    const at = (field === 'created_at' ? invoice.createdAt : invoice.updatedAt).getTime();
    if (from !== undefined && at < from.getTime()) return false;
    if (until !== undefined && at >= until.getTime()) return false;
  }
  return true;
}
