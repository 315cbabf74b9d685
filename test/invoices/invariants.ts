/**
 * The invariants every adapter's invoices keep with the ledger (issue #17), checked straight
 * against storage: every billed line on exactly one invoice, totals equal to their lines, gap-free
 * numbers, dues consistent with the balance, credit notes within what their invoice was paid.
 */
import type { InvoiceRecord, Storage, TransactionRecord } from 'billing-engine';
import { expect } from 'vitest';

/** Lines the engine bills: charges, credits from commands (manual credits have no kind), coupons, prorations. */
export function isBilled(line: TransactionRecord): boolean {
  if (line.type === 'charge') return true;
  if (line.type === 'credit') return line.kind !== null;
  return line.type === 'adjustment' && (line.kind === 'coupon' || line.kind === 'prorated');
}

export interface InvariantReport {
  readonly invoices: number;
  readonly creditNotes: number;
  readonly billedLines: number;
}

/**
 * Checks every invariant for one site. `exactDues`: no unbilled positive adjustment was posted, so
 * the open invoices owe exactly the positive part of each balance.
 */
export async function checkInvoiceInvariants(
  storage: Storage,
  siteId: number,
  exactDues = true,
): Promise<InvariantReport> {
  return storage.transaction(async (tx) => {
    const listed = await tx.invoices.list(siteId, { direction: 'asc', offset: 0, limit: 100_000 });
    expect(listed.invoices).toHaveLength(listed.total);
    // Drafts (and drafts voided before they were issued) have no number and nothing on the ledger;
    // they list after every issued invoice.
    const invoices = listed.invoices.filter((i) => i.sequenceNumber !== null);
    const unissued = listed.invoices.slice(invoices.length);
    expect([...invoices, ...unissued]).toEqual(listed.invoices);
    for (const draft of unissued) {
      expect(['draft', 'voided']).toContain(draft.status);
      expect(draft.number).toBeNull();
      expect(draft.lineItems.every((item) => item.transactionId === null)).toBe(true);
      expect(draft.payments).toEqual([]);
      expect(draft.credits).toEqual([]);
    }
    // Gap-free numbers per site: 1..n in issue order.
    expect(invoices.map((i) => i.sequenceNumber)).toEqual(invoices.map((_, k) => k + 1));
    expect(new Set(invoices.map((i) => i.uid)).size).toBe(invoices.length);
    const { creditNotes } = await tx.invoices.listCreditNotes(siteId, { direction: 'asc', offset: 0, limit: 100_000 });
    expect(creditNotes.map((n) => n.sequenceNumber)).toEqual(creditNotes.map((_, k) => k + 1));

    const subscriptionIds = new Set(invoices.map((i) => i.subscriptionId));
    const allLines: TransactionRecord[] = [];
    for (const id of subscriptionIds) allLines.push(...(await tx.ledger.listForSubscription(siteId, id)));
    const lineById = new Map(allLines.map((l) => [l.id, l]));

    // Every billed line is on exactly one invoice, as an item or a discount.
    const onInvoice = new Map<number, string[]>();
    for (const invoice of invoices) {
      for (const id of [
        ...invoice.lineItems.map((i) => i.transactionId!),
        ...invoice.discounts.map((d) => d.transactionId),
      ])
        onInvoice.set(id, [...(onInvoice.get(id) ?? []), invoice.uid]);
    }
    const billed = allLines.filter(isBilled);
    for (const line of billed)
      expect(onInvoice.get(line.id), `line ${line.id} (${line.type} ${line.kind})`).toHaveLength(1);
    for (const id of onInvoice.keys()) expect(isBilled(lineById.get(id)!)).toBe(true);

    for (const invoice of invoices) checkInvoice(invoice, lineById);
    // Invoice totals equal the ledger exactly.
    expect(invoices.reduce((sum, i) => sum + i.totalInCents, 0)).toBe(
      billed.reduce((sum, l) => sum + l.amountInCents, 0),
    );

    // A payment line is never applied beyond its amount.
    const applied = new Map<number, number>();
    for (const invoice of invoices)
      for (const p of invoice.payments)
        applied.set(p.transactionId, (applied.get(p.transactionId) ?? 0) + p.amountInCents);
    for (const [id, amount] of applied) {
      const payment = lineById.get(id)!;
      expect(payment.type).toBe('payment');
      expect(amount).toBeLessThanOrEqual(payment.amountInCents);
    }

    // Credit notes never exceed their invoice's paid amount; the invoice counts what they returned.
    for (const invoice of invoices) {
      const notes = creditNotes.filter((n) => n.invoiceUid === invoice.uid);
      const returned = notes.reduce((sum, n) => sum + n.totalInCents, 0);
      expect(returned).toBe(invoice.refundInCents);
      expect(returned).toBeLessThanOrEqual(invoice.paidInCents);
      for (const note of notes) expect(note.totalInCents).toBeGreaterThan(0);
    }

    // The open invoices owe what the subscription owes.
    for (const id of subscriptionIds) {
      const balance = await tx.ledger.balance(siteId, id);
      const dues = invoices
        .filter((i) => i.subscriptionId === id && i.status === 'open')
        .reduce((sum, i) => sum + i.dueInCents, 0);
      if (exactDues) expect(dues, `subscription ${id}`).toBe(Math.max(0, balance));
      else expect(dues).toBeLessThanOrEqual(Math.max(0, balance));
    }
    return { invoices: invoices.length, creditNotes: creditNotes.length, billedLines: billed.length };
  });
}

function checkInvoice(invoice: InvoiceRecord, lineById: Map<number, TransactionRecord>): void {
  const itemLines = invoice.lineItems.map((i) => lineById.get(i.transactionId!)!);
  const discountLines = invoice.discounts.map((d) => lineById.get(d.transactionId)!);
  for (const [k, item] of invoice.lineItems.entries()) expect(item.totalInCents).toBe(itemLines[k]!.amountInCents);
  for (const [k, d] of invoice.discounts.entries()) expect(d.amountInCents).toBe(-discountLines[k]!.amountInCents);
  expect(invoice.subtotalInCents).toBe(invoice.lineItems.reduce((sum, i) => sum + i.subtotalInCents, 0));
  expect(invoice.discountInCents).toBe(invoice.discounts.reduce((sum, d) => sum + d.amountInCents, 0));
  expect(invoice.taxInCents).toBe(0);
  expect(invoice.totalInCents).toBe(invoice.subtotalInCents - invoice.discountInCents + invoice.taxInCents);
  expect(invoice.paidInCents).toBe(invoice.payments.reduce((sum, p) => sum + p.amountInCents, 0));
  expect(invoice.creditInCents).toBe(invoice.credits.reduce((sum, c) => sum + c.amountInCents, 0));
  if (invoice.status === 'voided') {
    expect(invoice.dueInCents).toBe(0);
    return;
  }
  expect(invoice.dueInCents).toBe(Math.max(0, invoice.totalInCents - invoice.creditInCents - invoice.paidInCents));
  if (invoice.status === 'paid') {
    expect(invoice.dueInCents).toBe(0);
    expect(invoice.paidDate).not.toBeNull();
  }
  if (invoice.status === 'open') expect(invoice.dueInCents).toBeGreaterThan(0);
}
