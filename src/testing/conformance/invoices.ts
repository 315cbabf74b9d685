import assert from 'node:assert/strict';
import type { NewCreditNote, NewInvoice, StorageTransaction } from 'billing-engine';
import { seedBillingSite } from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

const NO_ADDRESS = { address: null, address2: null, city: null, state: null, zip: null, country: null };

/** A new invoice whose nested documents hold every kind of value (dates, nulls, negatives, unicode). */
export function invoiceFixture(siteId: number, sequence: number, overrides: Partial<NewInvoice> = {}): NewInvoice {
  return {
    uid: `inv_fixture${siteId}x${sequence}`,
    siteId,
    subscriptionId: 7,
    customerId: 3,
    number: `INV-${sequence}`,
    sequenceNumber: sequence,
    status: 'open',
    role: 'renewal',
    collectionMethod: 'automatic',
    issueDate: '2026-03-01',
    dueDate: '2026-03-15',
    paidDate: null,
    currency: 'USD',
    memo: 'Thank you ✓',
    seller: { name: 'Acme', address: NO_ADDRESS, phone: null },
    customer: {
      customerId: 3,
      firstName: 'Zoë',
      lastName: 'Ng',
      organization: null,
      email: 'z@example.com',
      reference: 'ref-1',
      billingAddress: { ...NO_ADDRESS, city: 'Zürich', country: 'CH' },
    },
    productName: 'Basic',
    productFamilyName: null,
    periodIndex: 2,
    periodStart: at(T0, 0),
    periodEnd: at(T0, 86_400_000 * 31),
    lineItems: [
      {
        transactionId: 11,
        title: 'Basic',
        description: 'baseline',
        quantity: '1',
        unitPriceInCents: 2000,
        subtotalInCents: 2000,
        discountInCents: 0,
        taxInCents: 0,
        totalInCents: 2000,
        periodStart: at(T0, 0),
        periodEnd: at(T0, 86_400_000 * 31),
        productId: 5,
        componentId: null,
        kind: 'baseline',
      },
      {
        transactionId: 12,
        title: 'Prorated credit',
        description: 'prorated',
        quantity: '1',
        unitPriceInCents: -650,
        subtotalInCents: -650,
        discountInCents: 0,
        taxInCents: 0,
        totalInCents: -650,
        periodStart: null,
        periodEnd: null,
        productId: null,
        componentId: 9,
        kind: null,
      },
    ],
    discounts: [{ transactionId: 13, title: 'Coupon', couponCode: 'HALF', amountInCents: 100 }],
    taxes: [],
    credits: [{ uid: 'credit_1', memo: 'Balance', amountInCents: 50, appliedAt: at(T0, 5) }],
    payments: [
      {
        transactionId: 14,
        amountInCents: 600,
        memo: 'Card',
        appliedAt: at(T0, 6),
        method: 'payment',
        gatewayTransactionId: 'tx_1',
      },
    ],
    subtotalInCents: 1350,
    discountInCents: 100,
    taxInCents: 0,
    totalInCents: 1250,
    creditInCents: 50,
    paidInCents: 600,
    refundInCents: 0,
    dueInCents: 600,
    createdAt: at(T0, 1),
    updatedAt: at(T0, 2),
    ...overrides,
  };
}

export function creditNoteFixture(siteId: number, sequence: number, invoiceUid: string): NewCreditNote {
  return {
    uid: `cn_fixture${siteId}x${sequence}`,
    siteId,
    subscriptionId: 7,
    customerId: 3,
    invoiceUid,
    number: `CN-${sequence}`,
    sequenceNumber: sequence,
    status: 'applied',
    issueDate: '2026-03-02',
    currency: 'USD',
    memo: 'Outage',
    seller: { name: 'Acme', address: NO_ADDRESS, phone: null },
    customer: invoiceFixture(siteId, 1).customer,
    lineItems: [
      {
        title: 'Refund',
        description: 'Outage',
        quantity: '1',
        unitPriceInCents: 300,
        subtotalInCents: 300,
        taxInCents: 0,
        totalInCents: 300,
        transactionId: 20,
      },
    ],
    totalInCents: 300,
    refundTransactionIds: [20],
    createdAt: at(T0, 10 + sequence),
  };
}

/**
 * Fills every invoice table for one site: a numbering counter, an invoice, a credit note and an
 * event (for suites that check a site's rows in every table, such as site deletion).
 */
export async function populateInvoices(tx: StorageTransaction, siteId: number): Promise<void> {
  const sequence = await tx.invoices.nextSequence(siteId, 'invoice');
  const invoice = await tx.invoices.insert(invoiceFixture(siteId, sequence));
  await tx.invoices.insertCreditNote(creditNoteFixture(siteId, 1, invoice.uid));
  await tx.invoices.appendEvent(siteId, {
    invoiceUid: invoice.uid,
    eventType: 'issue_invoice',
    data: {},
    createdAt: invoice.createdAt,
  });
}

/** Cases for the invoices repository: exact documents, gap-free numbering, lists, tenancy, rollback. */
export function invoiceCases({ api, storage, itWith }: SectionContext): void {
  const { describe, it } = api;
  describe('invoices', () => {
    it('stores invoices with their documents exactly, and refuses a taken uid or number', async () => {
      const seed = await seedBillingSite(storage(), 'inv-exact');
      const other = await seedBillingSite(storage(), 'inv-other');
      const stored = await storage().transaction((tx) => tx.invoices.insert(invoiceFixture(seed.site.id, 1)));
      const { id, ...fields } = stored;
      assert.ok(Number.isSafeInteger(id) && id > 0);
      assert.deepEqual(fields, invoiceFixture(seed.site.id, 1), 'every field, nested dates included, round-trips');
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.invoices.findById(seed.site.id, id), stored);
        assert.deepEqual(await tx.invoices.findByUid(seed.site.id, stored.uid), stored);
        assert.equal(await tx.invoices.findByUid(other.site.id, stored.uid), undefined, 'another site sees nothing');
        assert.equal(await tx.invoices.findById(other.site.id, id), undefined);
      });
      for (const clash of [
        invoiceFixture(seed.site.id, 2, { uid: stored.uid }),
        invoiceFixture(seed.site.id, 1, { uid: 'inv_new' }),
      ]) {
        await assert.rejects(
          storage().transaction((tx) => tx.invoices.insert(clash)),
          (error: { code?: string }) => error.code === 'conflict',
        );
      }
      // The same uid and number on another site are fine.
      await storage().transaction((tx) => tx.invoices.insert(invoiceFixture(other.site.id, 1, { uid: stored.uid })));
    });

    it('numbers each series of each site 1, 2, 3 and gives a rolled-back number back', async () => {
      const a = await seedBillingSite(storage(), 'inv-seq-a');
      const b = await seedBillingSite(storage(), 'inv-seq-b');
      const taken = await storage().transaction(async (tx) => [
        await tx.invoices.nextSequence(a.site.id, 'invoice'),
        await tx.invoices.nextSequence(a.site.id, 'invoice'),
        await tx.invoices.nextSequence(b.site.id, 'invoice'),
        await tx.invoices.nextSequence(a.site.id, 'credit_note'),
      ]);
      assert.deepEqual(taken, [1, 2, 1, 1]);
      await assert.rejects(
        storage().transaction(async (tx) => {
          assert.equal(await tx.invoices.nextSequence(a.site.id, 'invoice'), 3);
          throw new Abort();
        }),
        Abort,
      );
      assert.equal(await storage().transaction((tx) => tx.invoices.nextSequence(a.site.id, 'invoice')), 3);
    });

    it('takes a block of consecutive numbers at once and answers the last, gap-free with single steps', async () => {
      const a = await seedBillingSite(storage(), 'inv-seq-block');
      const taken = await storage().transaction(async (tx) => [
        await tx.invoices.nextSequence(a.site.id, 'invoice', 3),
        await tx.invoices.nextSequence(a.site.id, 'invoice'),
        await tx.invoices.nextSequence(a.site.id, 'invoice', 2),
        await tx.invoices.nextSequence(a.site.id, 'credit_note', 4),
      ]);
      // 1-3, then 4, then 5-6; the other series starts at 1-4.
      assert.deepEqual(taken, [3, 4, 6, 4]);
      await assert.rejects(
        storage().transaction(async (tx) => {
          assert.equal(await tx.invoices.nextSequence(a.site.id, 'invoice', 5), 11);
          throw new Abort();
        }),
        Abort,
      );
      assert.equal(await storage().transaction((tx) => tx.invoices.nextSequence(a.site.id, 'invoice')), 7);
      // A count that is not a positive whole number is a programming error (the SQL adapters report
      // it as a storage error): refused, nothing taken.
      for (const bad of [0, -1, 1.5]) {
        await assert.rejects(storage().transaction((tx) => tx.invoices.nextSequence(a.site.id, 'invoice', bad)));
      }
      assert.equal(await storage().transaction((tx) => tx.invoices.nextSequence(a.site.id, 'invoice')), 8);
    });

    itWith(
      'concurrentTransactions',
      'numbering under concurrent issuers needs concurrent transactions',
      'concurrent issuers take distinct numbers with no gaps',
      async () => {
        const seed = await seedBillingSite(storage(), 'inv-race');
        const numbers = await Promise.all(
          Array.from({ length: 8 }, () =>
            storage().transaction(async (tx) => {
              const n = await tx.invoices.nextSequence(seed.site.id, 'invoice');
              await tx.invoices.insert(invoiceFixture(seed.site.id, n));
              return n;
            }),
          ),
        );
        assert.deepEqual(
          [...numbers].sort((x, y) => x - y),
          [1, 2, 3, 4, 5, 6, 7, 8],
        );
      },
    );

    it('updates an invoice in place, keeping its identity, and lists by subscription and status', async () => {
      const seed = await seedBillingSite(storage(), 'inv-upd');
      const [first, second] = await storage().transaction(async (tx) => [
        await tx.invoices.insert(invoiceFixture(seed.site.id, 1)),
        await tx.invoices.insert(invoiceFixture(seed.site.id, 2, { subscriptionId: 8 })),
      ]);
      assert.ok(first && second);
      const paid = {
        ...first,
        uid: 'inv_changed',
        number: 'X-9',
        status: 'paid' as const,
        paidDate: '2026-03-03',
        dueInCents: 0,
        paidInCents: 1200,
        updatedAt: at(T0, 99),
      };
      const updated = await storage().transaction((tx) => tx.invoices.update(paid));
      assert.deepEqual(updated, { ...paid, uid: first.uid, number: first.number }, 'uid and number never change');
      assert.equal(await storage().transaction((tx) => tx.invoices.update({ ...paid, id: 987_654 })), undefined);
      await storage().transaction(async (tx) => {
        assert.deepEqual(
          (await tx.invoices.listForSubscription(seed.site.id, 7)).map((i) => i.id),
          [first.id],
        );
        assert.deepEqual(await tx.invoices.listForSubscription(seed.site.id, 7, 'open'), []);
        assert.deepEqual(
          (await tx.invoices.listForSubscription(seed.site.id, 8, 'open')).map((i) => i.id),
          [second.id],
        );
      });
    });

    it('keeps drafts without a number, lists them after issued invoices, numbers one once and deletes only drafts', async () => {
      const seed = await seedBillingSite(storage(), 'inv-draft');
      const draft = (n: number) =>
        invoiceFixture(seed.site.id, 0, { uid: `inv_draft${n}`, number: null, sequenceNumber: null, status: 'draft' });
      const [issued, one, two] = await storage().transaction(async (tx) => [
        await tx.invoices.insert(invoiceFixture(seed.site.id, 1)),
        await tx.invoices.insert(draft(1)),
        await tx.invoices.insert(draft(2)),
      ]);
      assert.ok(issued && one && two);
      assert.equal(one.number, null, 'any number of drafts, none numbered');
      assert.equal(two.sequenceNumber, null);
      const order = (direction: 'asc' | 'desc') =>
        storage().transaction(async (tx) =>
          (await tx.invoices.list(seed.site.id, { direction, offset: 0, limit: 10 })).invoices.map((i) => i.uid),
        );
      assert.deepEqual(await order('asc'), [issued.uid, one.uid, two.uid], 'drafts after issued invoices, by id');
      assert.deepEqual(await order('desc'), [two.uid, one.uid, issued.uid]);
      const numbered = await storage().transaction((tx) =>
        tx.invoices.update({ ...one, number: 'INV-2', sequenceNumber: 2, status: 'open', issueDate: '2026-03-09' }),
      );
      assert.deepEqual(numbered, {
        ...one,
        number: 'INV-2',
        sequenceNumber: 2,
        status: 'open',
        issueDate: '2026-03-09',
      });
      const renumbered = await storage().transaction((tx) =>
        tx.invoices.update({ ...numbered!, number: 'INV-7', sequenceNumber: 7 }),
      );
      assert.deepEqual(renumbered, numbered, 'a number, once set, never changes');
      assert.deepEqual(await order('asc'), [issued.uid, one.uid, two.uid]);
      await storage().transaction(async (tx) => {
        assert.equal(await tx.invoices.deleteDraft(seed.site.id, one.id), false, 'an issued invoice is not deleted');
        assert.equal(await tx.invoices.deleteDraft(seed.site.id + 1_000, two.id), false, 'nor another site');
        assert.equal(await tx.invoices.deleteDraft(seed.site.id, two.id), true);
        assert.equal(await tx.invoices.findById(seed.site.id, two.id), undefined);
        assert.deepEqual(await tx.invoices.findById(seed.site.id, one.id), numbered);
      });
    });

    it('lists a page of invoices with filters, direction and a total', async () => {
      const seed = await seedBillingSite(storage(), 'inv-list');
      await storage().transaction(async (tx) => {
        for (let n = 1; n <= 5; n++) {
          await tx.invoices.insert(
            invoiceFixture(seed.site.id, n, {
              status: n % 2 === 0 ? 'paid' : 'open',
              paidDate: n % 2 === 0 ? `2026-03-0${n}` : null,
              issueDate: `2026-03-0${n}`,
              customerId: n <= 2 ? 30 : 31,
              createdAt: at(T0, n * 1000),
            }),
          );
        }
      });
      const base = { direction: 'asc' as const, offset: 0, limit: 50 };
      await storage().transaction(async (tx) => {
        const numbers = async (filter: Parameters<typeof tx.invoices.list>[1]) => {
          const { invoices, total } = await tx.invoices.list(seed.site.id, filter);
          return { numbers: invoices.map((i) => i.sequenceNumber), total };
        };
        assert.deepEqual(await numbers(base), { numbers: [1, 2, 3, 4, 5], total: 5 });
        assert.deepEqual(await numbers({ ...base, direction: 'desc', offset: 1, limit: 2 }), {
          numbers: [4, 3],
          total: 5,
        });
        assert.deepEqual(await numbers({ ...base, status: 'paid' }), { numbers: [2, 4], total: 2 });
        assert.deepEqual(await numbers({ ...base, customerId: 30 }), { numbers: [1, 2], total: 2 });
        assert.deepEqual(await numbers({ ...base, number: 'INV-3' }), { numbers: [3], total: 1 });
        assert.deepEqual(
          await numbers({ ...base, localDates: { field: 'issue_date', from: '2026-03-02', to: '2026-03-04' } }),
          { numbers: [2, 3, 4], total: 3 },
        );
        assert.deepEqual(await numbers({ ...base, localDates: { field: 'paid_date', to: '2026-03-03' } }), {
          numbers: [2],
          total: 1,
        });
        assert.deepEqual(
          await numbers({ ...base, instants: { field: 'created_at', from: at(T0, 2000), until: at(T0, 4000) } }),
          { numbers: [2, 3], total: 2 },
        );
        // The total is the whole match whatever page is asked: a full page, the partial last
        // one, one past the end, and a page exactly as long as what is left.
        assert.deepEqual(await numbers({ ...base, limit: 2 }), { numbers: [1, 2], total: 5 });
        assert.deepEqual(await numbers({ ...base, offset: 4, limit: 2 }), { numbers: [5], total: 5 });
        assert.deepEqual(await numbers({ ...base, offset: 7, limit: 2 }), { numbers: [], total: 5 });
        assert.deepEqual(await numbers({ ...base, offset: 3, limit: 2 }), { numbers: [4, 5], total: 5 });
        assert.deepEqual(await numbers({ ...base, status: 'paid', offset: 0, limit: 0 }), { numbers: [], total: 2 });
      });
    });

    it('stores credit notes and invoice events exactly, per site, and a rollback leaves neither', async () => {
      const seed = await seedBillingSite(storage(), 'inv-cn');
      const other = await seedBillingSite(storage(), 'inv-cn-other');
      const invoice = await storage().transaction((tx) => tx.invoices.insert(invoiceFixture(seed.site.id, 1)));
      const note = await storage().transaction((tx) =>
        tx.invoices.insertCreditNote(creditNoteFixture(seed.site.id, 1, invoice.uid)),
      );
      const { id: _id, ...fields } = note;
      assert.deepEqual(fields, creditNoteFixture(seed.site.id, 1, invoice.uid));
      await assert.rejects(
        storage().transaction((tx) => tx.invoices.insertCreditNote(creditNoteFixture(seed.site.id, 1, invoice.uid))),
        (error: { code?: string }) => error.code === 'conflict',
      );
      const event = await storage().transaction((tx) =>
        tx.invoices.appendEvent(seed.site.id, {
          invoiceUid: invoice.uid,
          eventType: 'apply_payment',
          data: { amount_in_cents: 600, memo: 'Card ✓', nested: { ok: true } },
          createdAt: at(T0, 7),
        }),
      );
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.invoices.insertCreditNote(creditNoteFixture(seed.site.id, 2, invoice.uid));
          await tx.invoices.appendEvent(seed.site.id, {
            invoiceUid: invoice.uid,
            eventType: 'void_invoice',
            data: {},
            createdAt: at(T0, 8),
          });
          throw new Abort();
        }),
        Abort,
      );
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.invoices.findCreditNoteByUid(seed.site.id, note.uid), note);
        assert.equal(await tx.invoices.findCreditNoteByUid(other.site.id, note.uid), undefined);
        assert.deepEqual(await tx.invoices.listCreditNotes(seed.site.id, { direction: 'desc', offset: 0, limit: 10 }), {
          creditNotes: [note],
          total: 1,
        });
        assert.deepEqual(
          await tx.invoices.listCreditNotes(seed.site.id, {
            invoiceUid: 'inv_else',
            direction: 'asc',
            offset: 0,
            limit: 10,
          }),
          { creditNotes: [], total: 0 },
        );
        assert.deepEqual(await tx.invoices.listEvents(seed.site.id, invoice.uid), [event]);
        assert.deepEqual(await tx.invoices.listEvents(other.site.id, invoice.uid), []);
      });
    });

    it('appends several events at once, in the order given, after the earlier ones; none for an empty list', async () => {
      const seed = await seedBillingSite(storage(), 'inv-events-many');
      const invoice = await storage().transaction((tx) => tx.invoices.insert(invoiceFixture(seed.site.id, 1)));
      const first = await storage().transaction((tx) =>
        tx.invoices.appendEvent(seed.site.id, {
          invoiceUid: invoice.uid,
          eventType: 'issue_invoice',
          data: {},
          createdAt: at(T0, 1),
        }),
      );
      const given = (['apply_payment', 'change_invoice_status', 'apply_payment'] as const).map((eventType, i) => ({
        invoiceUid: invoice.uid,
        eventType,
        data: { n: i, nested: { memo: `line ${i}` } },
        createdAt: at(T0, 2 + i),
      }));
      const appended = await storage().transaction((tx) => tx.invoices.appendEvents(seed.site.id, given));
      assert.deepEqual(
        appended.map(({ id: _id, ...fields }) => fields),
        given,
      );
      assert.ok(appended.every((e, i) => e.id > (i === 0 ? first.id : appended[i - 1]!.id)));
      assert.deepEqual(await storage().transaction((tx) => tx.invoices.appendEvents(seed.site.id, [])), []);
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.invoices.appendEvents(seed.site.id, given.slice(0, 1));
          throw new Abort();
        }),
        Abort,
      );
      assert.deepEqual(await storage().transaction((tx) => tx.invoices.listEvents(seed.site.id, invoice.uid)), [
        first,
        ...appended,
      ]);
    });
  });
}
