import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/** `acme` with a 10.00-a-month product and one paid signup; `globex` to prove tenancy. */
async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'America/New_York' });
  await f.engine.sites.create({ subdomain: 'globex', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  const signup = await acme.subscriptions.create({
    productHandle: 'basic',
    customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
    creditCard: VISA,
  });
  return { acme, globex: f.engine.site('globex'), id: signup.subscription.id };
}

type Acme = Awaited<ReturnType<typeof setup>>['acme'];

/** The card payments (gateway lines) of a subscription, oldest first. */
async function cardPayments(acme: Acme, id: number) {
  const lines = await acme.ledger.transactions({ subscriptionId: id, direction: 'asc', perPage: 200 });
  return lines.filter((l) => l.type === 'payment' && l.gatewayTransactionId !== null).map((l) => l.amountInCents);
}

/** Prepayments, service credits and balances on every adapter, checked against the ledger. */
export function accountsSuite(harness: StorageHarness): void {
  describe(`accounts (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-02-10T15:00:00Z');

    it('records a prepayment that pays the open invoice first and holds the rest', async () => {
      const f = fixture();
      const { acme, id } = await setup(f);
      // A delayed charge is billed on an open invoice that owes 3.00.
      await acme.ledger.charge(id, { amount: '3.00', memo: 'Setup', delayCapture: true });
      expect(await acme.accounts.balances(id)).toEqual({
        openInvoicesInCents: 300,
        pendingInvoicesInCents: 0,
        pendingDiscountsInCents: 0,
        serviceCreditsInCents: 0,
        prepaymentsInCents: 0,
      });
      const created = await acme.accounts.createPrepayment(id, {
        amount: '25.50',
        memo: 'Check 1001',
        details: 'Received by mail',
        method: 'check',
      });
      expect(created.entry).toMatchObject({
        subscriptionId: id,
        account: 'prepayment',
        entryType: 'prepayment',
        amountInCents: 2550,
        memo: 'Check 1001',
        details: 'Received by mail',
        method: 'check',
        external: true,
      });
      expect(created.startingBalanceInCents).toBe(0);
      expect(created.endingBalanceInCents).toBe(2250);
      expect(await acme.accounts.balances(id)).toMatchObject({ openInvoicesInCents: 0, prepaymentsInCents: 2250 });
      // The ledger agrees: the prepayment is a payment line, the balance is the credit held.
      const line = (await acme.ledger.transactions({ subscriptionId: id })).find(
        (l) => l.id === created.entry.transactionId,
      );
      expect(line).toMatchObject({
        type: 'payment',
        kind: 'prepayment',
        amountInCents: 2550,
        endingBalanceInCents: -2250,
      });
      const invoices = await acme.invoices.list({ subscriptionId: id });
      expect(invoices.invoices.every((i) => i.status === 'paid')).toBe(true);
      const [listed] = await acme.accounts.listPrepayments(id);
      expect(listed).toMatchObject({ remainingInCents: 2250, refundedInCents: 0 });
      expect(listed!.entry.id).toBe(created.entry.id);
    });

    it('renewals use the prepayment before the card, and the account follows', async () => {
      const f = fixture();
      const { acme, id } = await setup(f);
      expect(await cardPayments(acme, id)).toEqual([1000]);
      await acme.accounts.createPrepayment(id, { amount: '15', memo: 'Wire', details: 'REF-9', method: 'ach' });
      f.clock.advance({ days: 31 });
      await f.engine.runDue();
      // 15.00 held covers the 10.00 renewal: the card is not charged, 5.00 remains.
      expect(await cardPayments(acme, id)).toEqual([1000]);
      expect(await acme.accounts.balances(id)).toMatchObject({ prepaymentsInCents: 500, openInvoicesInCents: 0 });
      f.clock.advance({ days: 31 });
      await f.engine.runDue();
      // The next renewal takes the last 5.00 and charges the card only the other 5.00.
      expect(await cardPayments(acme, id)).toEqual([1000, 500]);
      expect(await acme.accounts.balances(id)).toMatchObject({ prepaymentsInCents: 0 });
      const [prepayment] = await acme.accounts.listPrepayments(id);
      expect(prepayment).toMatchObject({ remainingInCents: 0, refundedInCents: 0 });
      // A manual credit later does not bring the used prepayment back.
      await acme.ledger.credit(id, { amount: '4', memo: 'Goodwill' });
      expect(await acme.accounts.balances(id)).toMatchObject({ prepaymentsInCents: 0, serviceCreditsInCents: 0 });
    });

    it('issues and deducts service credits, never below zero, used by renewals before prepayments', async () => {
      const f = fixture();
      const { acme, id } = await setup(f);
      const issued = await acme.accounts.issueServiceCredit(id, { amount: '6', memo: 'Outage' });
      expect(issued.entry).toMatchObject({ account: 'service_credit', entryType: 'credit', amountInCents: 600 });
      expect(issued.endingBalanceInCents).toBe(600);
      const deducted = await acme.accounts.deductServiceCredit(id, { amountInCents: 100, memo: 'Correction' });
      expect(deducted.entry).toMatchObject({ entryType: 'debit', amountInCents: 100, memo: 'Correction' });
      expect(deducted.endingBalanceInCents).toBe(500);
      const tooMuch = await rejection(acme.accounts.deductServiceCredit(id, { amount: '5.01' }));
      expect(tooMuch.code).toBe('validation');
      expect(tooMuch.details.map((d) => d.message)).toEqual(['Amount: cannot exceed the service credit balance.']);
      await acme.accounts.createPrepayment(id, { amount: '8', memo: 'Cash', details: 'Desk', method: 'cash' });
      expect(await acme.accounts.balances(id)).toMatchObject({ serviceCreditsInCents: 500, prepaymentsInCents: 800 });
      expect(await acme.ledger.transactions({ subscriptionId: id }).then((l) => l[0]!.endingBalanceInCents)).toBe(
        -1300,
      );
      f.clock.advance({ days: 31 });
      await f.engine.runDue();
      // 10.00: 5.00 from the service credit first, then 5.00 of the prepayment; no card payment.
      expect(await cardPayments(acme, id)).toEqual([1000]);
      expect(await acme.accounts.balances(id)).toMatchObject({ serviceCreditsInCents: 0, prepaymentsInCents: 300 });
      // A deduction of an emptied account is refused and changes nothing.
      const lines = await acme.ledger.transactions({ subscriptionId: id });
      await rejection(acme.accounts.deductServiceCredit(id, { amount: '0.01' }));
      expect(await acme.ledger.transactions({ subscriptionId: id })).toEqual(lines);
    });

    it('refunds a prepayment up to what remains of it, and the ledger balance follows', async () => {
      const f = fixture();
      const { acme, id } = await setup(f);
      const first = await acme.accounts.createPrepayment(id, {
        amount: '12',
        memo: 'A',
        details: 'a',
        method: 'check',
      });
      const second = await acme.accounts.createPrepayment(id, { amount: '5', memo: 'B', details: 'b', method: 'cash' });
      f.clock.advance({ days: 31 });
      await f.engine.runDue();
      // The renewal used 10.00 of the oldest prepayment: 2.00 of the first and all 5.00 of the second remain.
      const views = await acme.accounts.listPrepayments(id);
      expect(views.map((v) => v.remainingInCents)).toEqual([200, 500]);
      const over = await rejection(acme.accounts.refundPrepayment(id, first.entry.id, { amount: '2.01', memo: 'x' }));
      expect(over.details.map((d) => d.message)).toEqual([
        'Amount: cannot exceed the remaining amount of the prepayment.',
      ]);
      const refunded = await acme.accounts.refundPrepayment(id, first.entry.id, { amountInCents: 150, memo: 'Back' });
      expect(refunded).toMatchObject({ remainingInCents: 50, refundedInCents: 150 });
      // Without an amount, the whole remainder.
      const rest = await acme.accounts.refundPrepayment(id, second.entry.id, { memo: 'All back' });
      expect(rest).toMatchObject({ remainingInCents: 0, refundedInCents: 500 });
      expect(await acme.accounts.balances(id)).toMatchObject({ prepaymentsInCents: 50 });
      const lines = await acme.ledger.transactions({ subscriptionId: id });
      expect(lines[0]!.endingBalanceInCents).toBe(-50);
      expect(lines.filter((l) => l.kind === 'prepayment_refund').map((l) => [l.type, l.amountInCents])).toEqual([
        ['refund', 500],
        ['adjustment', 500],
        ['refund', 150],
        ['adjustment', 150],
      ]);
      const empty = await rejection(acme.accounts.refundPrepayment(id, second.entry.id, { memo: 'Again' }));
      expect(empty.details.map((d) => d.message)).toEqual(['Prepayment: has no remaining amount to refund.']);
      // An unknown prepayment, or another subscription's, is not found.
      expect((await rejection(acme.accounts.refundPrepayment(id, 999_999, { memo: 'x' }))).code).toBe('not_found');
    });

    it('refuses bad input with every problem at once and changes nothing', async () => {
      const f = fixture();
      const { acme, globex, id } = await setup(f);
      const before = await acme.ledger.transactions({ subscriptionId: id });
      const bad = await rejection(acme.accounts.createPrepayment(id, { amount: '-1', method: 'barter' }));
      expect(bad.code).toBe('validation');
      expect(bad.details.map((d) => d.message)).toEqual([
        'Amount: must be greater than or equal to 0.',
        'Memo: cannot be blank.',
        'Details: cannot be blank.',
        'Method: is not included in the list.',
      ]);
      const card = await rejection(
        acme.accounts.createPrepayment(id, { amount: 1, memo: 'm', details: 'd', method: 'credit_card_on_file' }),
      );
      expect(card.details[0]!.attribute).toBe('method');
      const zero = await rejection(acme.accounts.issueServiceCredit(id, { amount: '0' }));
      expect(zero.details.map((d) => d.message)).toEqual(['Amount: must be greater than 0.']);
      const list = await rejection(
        acme.accounts.listPrepayments(id, { perPage: 0, dateField: 'updated_at', startDate: '2026-13-01' }),
      );
      expect(list.details.map((d) => d.message)[0]).toBe('Per page: must be a positive integer.');
      expect(list.details.length).toBe(3);
      expect(await acme.ledger.transactions({ subscriptionId: id })).toEqual(before);
      // Another site cannot reach the subscription.
      expect((await rejection(globex.accounts.balances(id))).code).toBe('not_found');
      expect((await rejection(acme.accounts.balances(999_999))).code).toBe('not_found');
    });

    it('pages prepayments, filters them by local date, and keeps each subscription to itself', async () => {
      const f = fixture();
      const { acme, id } = await setup(f);
      for (const amount of ['1', '2', '3']) {
        await acme.accounts.createPrepayment(id, { amount, memo: amount, details: 'd', method: 'other' });
        f.clock.advance({ days: 1 });
      }
      expect((await acme.accounts.listPrepayments(id, { perPage: 2, page: 2 })).map((p) => p.entry.memo)).toEqual([
        '3',
      ]);
      // 2026-02-10 15:00Z is 10:00 in New York; the second prepayment is on the 11th there.
      const onDay = await acme.accounts.listPrepayments(id, {
        dateField: 'created_at',
        startDate: '2026-02-11',
        endDate: '2026-02-11',
      });
      expect(onDay.map((p) => p.entry.amountInCents)).toEqual([200]);
      const other = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Bo', lastName: 'B', email: 'bo@example.com' },
        creditCard: VISA,
      });
      expect(await acme.accounts.listPrepayments(other.subscription.id)).toEqual([]);
      const first = (await acme.accounts.listPrepayments(id))[0]!;
      expect(
        (await rejection(acme.accounts.refundPrepayment(other.subscription.id, first.entry.id, { memo: 'x' }))).code,
      ).toBe('not_found');
    });

    it('exports subscriptions and invoices as jobs whose rows name the records of that instant', async () => {
      const f = fixture();
      const { acme, globex, id } = await setup(f);
      const second = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Bo', lastName: 'B', email: 'bo@example.com' },
        creditCard: VISA,
      });
      const job = await acme.exports.exportSubscriptions();
      expect(job).toMatchObject({ kind: 'subscriptions', status: 'completed', rowCount: 2 });
      expect(job.finishedAt?.toISOString()).toBe('2026-02-10T15:00:00.000Z');
      expect(await acme.exports.rows('subscriptions', job.id)).toEqual([{ id }, { id: second.subscription.id }]);
      expect(await acme.exports.rows('subscriptions', job.id, { page: 2, perPage: 1 })).toEqual([
        { id: second.subscription.id },
      ]);
      expect(await acme.exports.rows('subscriptions', job.id, { perPage: 5000 })).toHaveLength(2);
      const invoices = await acme.exports.exportInvoices();
      const listed = await acme.invoices.list({ direction: 'asc' });
      expect(invoices.rowCount).toBe(listed.total);
      expect(await acme.exports.rows('invoices', invoices.id)).toEqual(listed.invoices.map((i) => ({ uid: i.uid })));
      // Another kind, another site or an unknown id is not found.
      expect((await rejection(acme.exports.read('invoices', job.id))).code).toBe('not_found');
      expect((await rejection(globex.exports.read('subscriptions', job.id))).code).toBe('not_found');
      expect((await rejection(acme.exports.rows('subscriptions', 999_999))).code).toBe('not_found');
      expect((await rejection(acme.exports.rows('subscriptions', job.id, { page: 0 }))).code).toBe('validation');
    });

    it('completes a job left pending when its status is read', async () => {
      const f = fixture();
      const { acme, id } = await setup(f);
      const site = await f.storage.transaction((tx) => tx.sites.findBySubdomain('acme'));
      const pending = await f.storage.transaction((tx) =>
        tx.exports.insert({ siteId: site!.id, kind: 'subscriptions', createdAt: f.clock.now() }),
      );
      expect(pending.status).toBe('pending');
      f.clock.advance({ minutes: 5 });
      const read = await acme.exports.read('subscriptions', pending.id);
      expect(read).toMatchObject({ status: 'completed', rowCount: 1 });
      expect(read.finishedAt?.toISOString()).toBe('2026-02-10T15:05:00.000Z');
      expect(await acme.exports.read('subscriptions', pending.id)).toEqual(read);
      expect(await acme.exports.rows('subscriptions', pending.id)).toEqual([{ id }]);
    });
  });
}
