import type { BillingError, BillingEvent, SubscriptionState, TransactionRecord } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import {
  generateReferralCode,
  REFERRAL_CODE_ALPHABET,
  REFERRAL_CODE_LENGTH,
} from '../../src/services/referral-service.js';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';
import { type LedgerHarness, ledgerServices, paidSubscription, seedSite, signedEffect } from './ledger-setup.js';

const DUPLICATE = 'DuplicatePrevention::DuplicateSubmissionError';

/** Everything a rejected command must leave untouched. */
interface Trace {
  readonly balance: number;
  readonly lines: number;
  readonly events: number;
  readonly refunded: readonly number[];
  readonly chargeCalls: number;
}

/** Engine-level behaviour of charges, adjustments, credits, payments, refunds, transactions, notes and referrals. */
export function ledgerSuite(harness: StorageHarness): void {
  describe(`ledger, notes and referrals (${harness.name})`, () => {
    const fixture = useEngine(harness);

    async function setup(): Promise<
      LedgerHarness & { f: EngineFixture; siteId: number; sub: number; paymentId: number }
    > {
      const f = fixture();
      const { siteId } = await seedSite(f.engine);
      const { id, paymentId } = await paidSubscription(f.engine);
      return { ...ledgerServices(f.storage, f.clock, f.gateway), f, siteId, sub: id, paymentId };
    }

    const lines = (f: EngineFixture, sub: number) => f.engine.site('acme').subscriptions.transactions(sub);
    const balance = async (f: EngineFixture, sub: number) =>
      (await f.engine.site('acme').subscriptions.get(sub)).balanceInCents;

    async function trace(f: EngineFixture, siteId: number, sub: number): Promise<Trace> {
      const all = await lines(f, sub);
      const events = await f.storage.transaction((tx) => tx.outbox.listAfter(siteId, 0, 10_000));
      return {
        balance: await balance(f, sub),
        lines: all.length,
        events: events.length,
        refunded: all.filter((l) => l.type === 'payment').map((l) => l.refundedAmountInCents),
        chargeCalls: f.gateway.chargeCalls,
      };
    }

    /** Asserts that `promise` rejects with exactly these messages and leaves no trace. */
    async function rejectsWithoutTrace(
      ctx: { f: EngineFixture; siteId: number; sub: number },
      promise: () => Promise<unknown>,
      messages: readonly string[],
      code = 'validation',
    ): Promise<BillingError> {
      const before = await trace(ctx.f, ctx.siteId, ctx.sub);
      const error = await rejection(promise());
      expect(error.code).toBe(code);
      expect(error.messages).toEqual(messages);
      expect(await trace(ctx.f, ctx.siteId, ctx.sub)).toEqual(before);
      return error;
    }

    async function setState(ctx: { f: EngineFixture; siteId: number; sub: number }, state: SubscriptionState) {
      await ctx.f.storage.transaction(async (tx) => {
        const current = await tx.subscriptions.findById(ctx.siteId, ctx.sub);
        await tx.subscriptions.updateAtVersion(ctx.siteId, ctx.sub, current!.version, { state });
      });
    }

    const eventsOf = (events: readonly BillingEvent[], key: string) => events.filter((e) => e.key === key);

    describe('balance range', () => {
      it('refuses an adjustment that would take the balance past 2^53, and the subscription keeps working', async () => {
        const ctx = await setup();
        const max = Number.MAX_SAFE_INTEGER;
        const start = await balance(ctx.f, ctx.sub);
        // Up to the largest balance kept exactly: allowed.
        await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: max - start });
        expect(await balance(ctx.f, ctx.sub)).toBe(max);
        const message = `Amount: would take the balance of subscription ${ctx.sub} beyond ${max} minor units, the largest amount kept exactly.`;
        await rejectsWithoutTrace(ctx, () => ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 1 }), [message]);
        // Every later command still works: reads, a credit back down, and the other direction's limit.
        await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: -max });
        expect(await balance(ctx.f, ctx.sub)).toBe(0);
        await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: -max });
        await rejectsWithoutTrace(ctx, () => ctx.ledger.adjust('acme', ctx.sub, { amountInCents: -1 }), [message]);
        expect((await lines(ctx.f, ctx.sub)).at(-1)?.endingBalanceInCents).toBe(-max);
        expect((await ctx.f.engine.site('acme').subscriptions.get(ctx.sub)).balanceInCents).toBe(-max);
      });
    });

    describe('charges', () => {
      it('T1: an immediate charge of 7 creates a charge and its payment of 700, balance unchanged', async () => {
        const ctx = await setup();
        const before = await lines(ctx.f, ctx.sub);
        const charge = await ctx.ledger.charge('acme', ctx.sub, { amount: 7, memo: 'One Time Charge' });
        expect(charge).toMatchObject({ type: 'charge', kind: 'one_time', amountInCents: 700, memo: 'One Time Charge' });
        const after = await lines(ctx.f, ctx.sub);
        const added = after.slice(before.length);
        expect(
          added.map((l) => [l.type, l.kind, l.amountInCents, l.startingBalanceInCents, l.endingBalanceInCents]),
        ).toEqual([
          ['charge', 'one_time', 700, 0, 700],
          ['payment', 'one_time', 700, 700, 0],
        ]);
        expect(after.at(-1)?.amountInCents).toBe(700);
        expect(added[1]?.success).toBe(true);
        expect(added[1]?.gatewayTransactionId).toMatch(/^ch_/);
        expect(await balance(ctx.f, ctx.sub)).toBe(0);
        const keys = [...ctx.f.gateway.charges.keys()].filter((k) => k.startsWith(`charge:${ctx.sub}:`));
        expect(keys).toHaveLength(1);
        expect(keys[0]).toMatch(new RegExp(`^charge:${ctx.sub}:[0-9a-f-]{36}$`));
        const attempt = await ctx.f.storage.transaction((tx) => tx.payments.findByKey(ctx.siteId, keys[0]!));
        expect(attempt).toMatchObject({
          status: 'succeeded',
          amountInCents: 700,
          purpose: 'charge',
          transactionId: added[1]!.id,
        });
        const success = eventsOf(ctx.events, 'payment_success');
        expect(success).toHaveLength(1);
        expect(success[0]?.payload).toMatchObject({ transaction: { id: added[1]!.id, amount_in_cents: 700 } });
        const pendingReconcile = await ctx.f.storage.transaction((tx) =>
          tx.dueWork.pendingFor(ctx.siteId, attempt!.id, ['reconcile_payment']),
        );
        expect(pendingReconcile).toEqual([]);
      });

      it('takes amountInCents over amount when both are given, and accepts numeric strings', async () => {
        const ctx = await setup();
        const both = await ctx.ledger.charge('acme', ctx.sub, { amount: '1.00', amountInCents: 250, memo: 'both' });
        expect(both.amountInCents).toBe(250);
        const text = await ctx.ledger.charge('acme', ctx.sub, { amountInCents: '300', memo: 'text' });
        expect(text.amountInCents).toBe(300);
        const major = await ctx.ledger.charge('acme', ctx.sub, { amount: '12.34', memo: 'major' });
        expect(major.amountInCents).toBe(1234);
      });

      it('rejects bad input with the service messages and leaves no trace', async () => {
        const ctx = await setup();
        await rejectsWithoutTrace(ctx, () => ctx.ledger.charge('acme', ctx.sub, { amount: 5 }), [
          'Memo: cannot be blank.',
        ]);
        await rejectsWithoutTrace(ctx, () => ctx.ledger.charge('acme', ctx.sub, { amount: 5, memo: '   ' }), [
          'Memo: cannot be blank.',
        ]);
        await rejectsWithoutTrace(ctx, () => ctx.ledger.charge('acme', ctx.sub, { amount: 'abc', memo: 'm' }), [
          'Amount: is not a number.',
        ]);
        await rejectsWithoutTrace(ctx, () => ctx.ledger.charge('acme', ctx.sub, { memo: 'm' }), [
          'Amount: is not a number.',
        ]);
        await rejectsWithoutTrace(ctx, () => ctx.ledger.charge('acme', ctx.sub, { amount: '-1.00', memo: 'm' }), [
          'Amount: must be greater than or equal to 0.',
        ]);
        await rejectsWithoutTrace(ctx, () => ctx.ledger.charge('acme', ctx.sub, { amountInCents: -5, memo: 'm' }), [
          'Amount: must be greater than or equal to 0.',
        ]);
        await rejectsWithoutTrace(ctx, () => ctx.ledger.charge('acme', ctx.sub, { amount: null }), [
          'Memo: cannot be blank.',
          'Amount: is not a number.',
        ]);
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.charge('acme', ctx.sub, { amount: 5, memo: 'm', delayCapture: true, accrueOnFailure: true }),
          ['Accrue on failure: cannot be combined with delay capture.'],
        );
        const missing = await rejection(ctx.ledger.charge('acme', 987_654, { amount: 5, memo: 'm' }));
        expect(missing.code).toBe('not_found');
        expect(missing.httpStatus).toBe(404);
      });

      it.each(['cancelled', 'expired'] as const)('refuses charges and credits on %s subscriptions', async (state) => {
        const ctx = await setup();
        await setState(ctx, state);
        await rejectsWithoutTrace(ctx, () => ctx.ledger.charge('acme', ctx.sub, { amount: 5, memo: 'm' }), [
          'This subscription is not eligible to accept charges.',
        ]);
        await rejectsWithoutTrace(ctx, () => ctx.ledger.credit('acme', ctx.sub, { amount: 5, memo: 'm' }), [
          'This subscription is not eligible to accept credits.',
        ]);
      });

      it('on a decline records only the failed payment as an info line and keeps the balance', async () => {
        const ctx = await setup();
        const before = await trace(ctx.f, ctx.siteId, ctx.sub);
        ctx.f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'charge:' });
        const error = await rejection(ctx.ledger.charge('acme', ctx.sub, { amountInCents: 500, memo: 'Setup fee' }));
        expect(error.code).toBe('payment_declined');
        expect(error.message).toBe('Bogus Gateway: Forced failure (Setup fee)');
        expect(error.messages).toEqual(['Bogus Gateway: Forced failure (Setup fee)']);
        expect(error.httpStatus).toBe(422);
        expect(await balance(ctx.f, ctx.sub)).toBe(before.balance);
        const added = (await lines(ctx.f, ctx.sub)).slice(before.lines);
        expect(added.map((l) => [l.type, l.amountInCents, l.success, l.memo, l.endingBalanceInCents])).toEqual([
          ['info', 500, false, 'Bogus Gateway: Forced failure (Setup fee)', before.balance],
        ]);
        expect(error.data).toMatchObject({ infoId: added[0]!.id });
        expect(error.data).not.toHaveProperty('chargeId');
        const failure = eventsOf(ctx.events, 'payment_failure');
        expect(failure).toHaveLength(1);
        expect(failure[0]?.payload).toMatchObject({
          message: 'Bogus Gateway: Forced failure',
          transaction: { id: added[0]!.id },
        });
        expect(eventsOf(ctx.events, 'payment_success')).toHaveLength(0);
        const key = `charge:${ctx.sub}:`;
        const attempts = await ctx.f.storage.transaction((tx) =>
          tx.payments.listUnresolved(new Date('2100-01-01'), 100),
        );
        expect(attempts.filter((a) => a.idempotencyKey.startsWith(key))).toEqual([]);
      });

      it('with accrueOnFailure keeps the charge on the balance when the payment is declined', async () => {
        const ctx = await setup();
        ctx.f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'charge:' });
        const error = await rejection(
          ctx.ledger.charge('acme', ctx.sub, { amountInCents: 500, memo: 'Setup fee', accrueOnFailure: true }),
        );
        expect(error.code).toBe('payment_declined');
        const all = await lines(ctx.f, ctx.sub);
        expect(all.slice(-2).map((l) => [l.type, l.kind, l.amountInCents, l.endingBalanceInCents])).toEqual([
          ['charge', 'one_time', 500, 500],
          ['info', null, 500, 500],
        ]);
        expect(error.data).toMatchObject({ chargeId: all.at(-2)!.id });
        expect(await balance(ctx.f, ctx.sub)).toBe(500);
      });

      it('reports a gateway error as gateway_error with the same record as a decline', async () => {
        const ctx = await setup();
        ctx.f.gateway.injectFailure({ outcome: 'error', keyPrefix: 'charge:' });
        const error = await rejection(ctx.ledger.charge('acme', ctx.sub, { amountInCents: 500, memo: 'Fee' }));
        expect(error.code).toBe('gateway_error');
        expect(error.message).toBe('Bogus Gateway: Gateway error (Fee)');
        expect((await lines(ctx.f, ctx.sub)).at(-1)).toMatchObject({ type: 'info', success: false });
        expect(await balance(ctx.f, ctx.sub)).toBe(0);
      });

      it('fails a charge on a subscription without a card without calling the gateway', async () => {
        const ctx = await setup();
        const free = await ctx.f.engine.site('acme').subscriptions.create({
          productHandle: 'free',
          customer: { firstName: 'F', lastName: 'R', email: 'free@example.com' },
        });
        const calls = ctx.f.gateway.chargeCalls;
        const error = await rejection(
          ctx.ledger.charge('acme', free.subscription.id, { amountInCents: 100, memo: 'x' }),
        );
        expect(error.code).toBe('gateway_error');
        expect(error.message).toBe('No payment profile on file. (x)');
        expect(ctx.f.gateway.chargeCalls).toBe(calls);
        expect(await balance(ctx.f, free.subscription.id)).toBe(0);
      });

      it('delay capture accrues the charge to the next renewal without a payment now', async () => {
        const ctx = await setup();
        const calls = ctx.f.gateway.chargeCalls;
        const charge = await ctx.ledger.charge('acme', ctx.sub, {
          amountInCents: 500,
          memo: 'Later',
          delayCapture: true,
        });
        expect(charge).toMatchObject({
          type: 'charge',
          kind: 'delay_capture',
          amountInCents: 500,
          endingBalanceInCents: 500,
        });
        expect(ctx.f.gateway.chargeCalls).toBe(calls);
        expect((await lines(ctx.f, ctx.sub)).at(-1)?.id).toBe(charge.id);
        ctx.f.clock.set('2026-02-15T12:00:01Z');
        expect(await ctx.f.engine.runDue()).toMatchObject({ renewed: 1 });
        const last = (await lines(ctx.f, ctx.sub)).at(-1);
        expect(last).toMatchObject({ type: 'payment', amountInCents: 1500, endingBalanceInCents: 0 });
      });

      it('uses existing credit first with useNegativeBalance and charges only the rest', async () => {
        const ctx = await setup();
        await ctx.ledger.credit('acme', ctx.sub, { amountInCents: 300, memo: 'goodwill' });
        await ctx.ledger.charge('acme', ctx.sub, {
          amountInCents: 1000,
          memo: 'partly covered',
          useNegativeBalance: true,
        });
        expect(
          (await lines(ctx.f, ctx.sub)).slice(-2).map((l) => [l.type, l.amountInCents, l.endingBalanceInCents]),
        ).toEqual([
          ['charge', 1000, 700],
          ['payment', 700, 0],
        ]);
        await ctx.ledger.credit('acme', ctx.sub, { amountInCents: 300, memo: 'goodwill again' });
        await ctx.ledger.charge('acme', ctx.sub, { amountInCents: 1000, memo: 'card only' });
        expect(
          (await lines(ctx.f, ctx.sub)).slice(-2).map((l) => [l.type, l.amountInCents, l.endingBalanceInCents]),
        ).toEqual([
          ['charge', 1000, 700],
          ['payment', 1000, -300],
        ]);
        await ctx.ledger.credit('acme', ctx.sub, { amountInCents: 1700, memo: 'big credit' });
        const calls = ctx.f.gateway.chargeCalls;
        const covered = await ctx.ledger.charge('acme', ctx.sub, {
          amountInCents: 500,
          memo: 'covered',
          useNegativeBalance: true,
        });
        expect(ctx.f.gateway.chargeCalls).toBe(calls);
        expect((await lines(ctx.f, ctx.sub)).at(-1)).toMatchObject({
          id: covered.id,
          type: 'charge',
          endingBalanceInCents: -1500,
        });
      });

      it('resolves an unanswered charge by asking the gateway by key, never charging twice', async () => {
        const ctx = await setup();
        ctx.f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'charge:', charged: true });
        const charge = await ctx.ledger.charge('acme', ctx.sub, { amountInCents: 400, memo: 'Lost answer' });
        expect(charge.amountInCents).toBe(400);
        expect((await lines(ctx.f, ctx.sub)).at(-1)).toMatchObject({ type: 'payment', amountInCents: 400 });
        const taken = [...ctx.f.gateway.charges.entries()].filter(([k]) => k.startsWith('charge:'));
        expect(taken).toHaveLength(1);
      });

      it('leaves an unanswered charge pending and settles it by reconciliation (failed: the gateway never saw it)', async () => {
        const ctx = await setup();
        ctx.f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'charge:', charged: false });
        const error = await rejection(ctx.ledger.charge('acme', ctx.sub, { amountInCents: 400, memo: 'Lost' }));
        expect(error.code).toBe('gateway_error');
        expect(error.data).toMatchObject({ pending: true });
        expect(await balance(ctx.f, ctx.sub)).toBe(0);
        const attemptId = error.data.attemptId as number;
        const [row] = await ctx.f.storage.transaction((tx) =>
          tx.dueWork.pendingFor(ctx.siteId, attemptId, ['reconcile_payment']),
        );
        expect(row).toBeDefined();
        expect(await ctx.ledger.reconcile(row!)).toBe('failed');
        expect((await lines(ctx.f, ctx.sub)).at(-1)).toMatchObject({
          type: 'info',
          success: false,
          amountInCents: 400,
        });
        expect(await balance(ctx.f, ctx.sub)).toBe(0);
        expect(await ctx.ledger.reconcile(row!)).toBe('settled');
        expect(
          await ctx.f.storage.transaction((tx) => tx.dueWork.pendingFor(ctx.siteId, attemptId, ['reconcile_payment'])),
        ).toEqual([]);
      });

      it('reconciles a charge whose money moved but whose answer and first lookup were lost', async () => {
        const ctx = await setup();
        ctx.f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'charge:', charged: true });
        ctx.gateway.failingLookups = 1;
        const error = await rejection(ctx.ledger.charge('acme', ctx.sub, { amountInCents: 400, memo: 'Later' }));
        expect(error.data).toMatchObject({ pending: true });
        const attemptId = error.data.attemptId as number;
        const [row] = await ctx.f.storage.transaction((tx) =>
          tx.dueWork.pendingFor(ctx.siteId, attemptId, ['reconcile_payment']),
        );
        const calls = ctx.f.gateway.chargeCalls;
        expect(await ctx.ledger.reconcile(row!)).toBe('succeeded');
        expect(ctx.f.gateway.chargeCalls).toBe(calls);
        expect((await lines(ctx.f, ctx.sub)).slice(-2).map((l) => [l.type, l.amountInCents])).toEqual([
          ['charge', 400],
          ['payment', 400],
        ]);
        expect(await balance(ctx.f, ctx.sub)).toBe(0);
      });
    });

    describe('duplicate prevention', () => {
      it('T6: refuses a second use of a uniqueness token with 409, across command kinds, leaving no trace', async () => {
        const ctx = await setup();
        await ctx.ledger.charge('acme', ctx.sub, { amountInCents: 100, memo: 'one', uniquenessToken: 'tok-1' });
        const error = await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.charge('acme', ctx.sub, { amountInCents: 100, memo: 'one', uniquenessToken: 'tok-1' }),
          [DUPLICATE],
          'duplicate_submission',
        );
        expect(error.httpStatus).toBe(409);
        expect(error.message).toBe(DUPLICATE);
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 100, uniquenessToken: 'tok-1' }),
          [DUPLICATE],
          'duplicate_submission',
        );
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.credit('acme', ctx.sub, { amountInCents: 100, memo: 'c', uniquenessToken: 'tok-1' }),
          [DUPLICATE],
          'duplicate_submission',
        );
        await rejectsWithoutTrace(
          ctx,
          () =>
            ctx.ledger.refund('acme', ctx.sub, {
              paymentId: ctx.paymentId,
              amountInCents: 1,
              memo: 'r',
              uniquenessToken: 'tok-1',
            }),
          [DUPLICATE],
          'duplicate_submission',
        );
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.recordExternalPayment('acme', ctx.sub, { amountInCents: 1, uniquenessToken: 'tok-1' }),
          [DUPLICATE],
          'duplicate_submission',
        );
        const noteError = await rejection(ctx.notes.create('acme', ctx.sub, { body: 'b', uniquenessToken: 'tok-1' }));
        expect(noteError.code).toBe('duplicate_submission');
        expect(await ctx.notes.list('acme', ctx.sub)).toEqual([]);
      });

      it('frees the token of a rejected command, and again after 60 minutes', async () => {
        const ctx = await setup();
        const bad = await rejection(
          ctx.ledger.credit('acme', ctx.sub, { amount: 'x', memo: 'c', uniquenessToken: 'tok-2' }),
        );
        expect(bad.code).toBe('validation');
        await ctx.ledger.credit('acme', ctx.sub, { amountInCents: 100, memo: 'c', uniquenessToken: 'tok-2' });
        ctx.f.clock.advance({ minutes: 59 });
        expect(
          (await rejection(ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 1, uniquenessToken: 'tok-2' }))).code,
        ).toBe('duplicate_submission');
        ctx.f.clock.advance({ minutes: 1 });
        await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 1, uniquenessToken: 'tok-2' });
        expect(await balance(ctx.f, ctx.sub)).toBe(-99);
      });

      it('keeps tokens per site', async () => {
        const ctx = await setup();
        await seedSite(ctx.f.engine, 'beta');
        const other = await paidSubscription(ctx.f.engine, 'beta');
        await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 5, uniquenessToken: 'shared' });
        await ctx.ledger.adjust('beta', other.id, { amountInCents: 5, uniquenessToken: 'shared' });
        expect((await ctx.f.engine.site('beta').subscriptions.get(other.id)).balanceInCents).toBe(5);
      });

      it('lets exactly one of 5 concurrent commands with one token run', async () => {
        const ctx = await setup();
        const results = await Promise.allSettled(
          Array.from({ length: 5 }, (_, i) =>
            i % 2 === 0
              ? ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 100, uniquenessToken: 'race' })
              : ctx.ledger.charge('acme', ctx.sub, {
                  amountInCents: 100,
                  memo: 'race',
                  uniquenessToken: 'race',
                  delayCapture: true,
                }),
          ),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost.map((r) => (r.reason as BillingError).code)).toEqual(Array(4).fill('duplicate_submission'));
        expect(await balance(ctx.f, ctx.sub)).toBe(100);
      });
    });

    describe('adjustments, credits and external payments', () => {
      it('moves the balance by a signed adjustment with an optional memo', async () => {
        const ctx = await setup();
        const up = await ctx.ledger.adjust('acme', ctx.sub, { amount: '12.50' });
        expect(up).toMatchObject({
          type: 'adjustment',
          kind: null,
          amountInCents: 1250,
          memo: '',
          startingBalanceInCents: 0,
          endingBalanceInCents: 1250,
        });
        const down = await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: -2000, memo: 'goodwill' });
        expect(down).toMatchObject({ amountInCents: -2000, memo: 'goodwill', endingBalanceInCents: -750 });
        expect(await balance(ctx.f, ctx.sub)).toBe(-750);
      });

      it('T7: a target adjustment sets the balance and records the difference', async () => {
        const ctx = await setup();
        await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 8800 });
        const target = await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 10000, adjustmentMethod: 'target' });
        expect(target).toMatchObject({
          type: 'adjustment',
          amountInCents: 1200,
          startingBalanceInCents: 8800,
          endingBalanceInCents: 10000,
        });
        const negative = await ctx.ledger.adjust('acme', ctx.sub, { amount: '-100', adjustmentMethod: 'target' });
        expect(negative).toMatchObject({ amountInCents: -20000, endingBalanceInCents: -10000 });
        const same = await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: '-10000', adjustmentMethod: 'target' });
        expect(same).toMatchObject({ amountInCents: 0, endingBalanceInCents: -10000 });
        expect(Object.is(same.amountInCents, -0)).toBe(false);
      });

      it('rejects bad adjustments without a trace', async () => {
        const ctx = await setup();
        await rejectsWithoutTrace(ctx, () => ctx.ledger.adjust('acme', ctx.sub, { amount: 'ten' }), [
          'Amount: is not a number.',
        ]);
        await rejectsWithoutTrace(ctx, () => ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 1.5 }), [
          'Amount: must be an integer.',
        ]);
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 1, memo: 'x'.repeat(256) }),
          ['Memo: is too long (maximum is 255 characters).'],
        );
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 1, adjustmentMethod: 'absolute' as 'target' }),
          ['Adjustment method: is not included in the list.'],
        );
        const ok = await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 1, memo: 'x'.repeat(255) });
        expect(ok.memo).toHaveLength(255);
      });

      it('T2: a credit of 7 is one credit line of -700', async () => {
        const ctx = await setup();
        const before = (await lines(ctx.f, ctx.sub)).length;
        const credit = await ctx.ledger.credit('acme', ctx.sub, { amount: 7, memo: 'credit' });
        expect(credit).toMatchObject({
          type: 'credit',
          amountInCents: -700,
          memo: 'credit',
          endingBalanceInCents: -700,
        });
        expect((await lines(ctx.f, ctx.sub)).length).toBe(before + 1);
        expect(await balance(ctx.f, ctx.sub)).toBe(-700);
      });

      it('T3: a credit with a null amount is "Amount: is not a number."', async () => {
        const ctx = await setup();
        await rejectsWithoutTrace(ctx, () => ctx.ledger.credit('acme', ctx.sub, { amount: null, memo: 'credit' }), [
          'Amount: is not a number.',
        ]);
        await rejectsWithoutTrace(ctx, () => ctx.ledger.credit('acme', ctx.sub, { amount: -1, memo: 'credit' }), [
          'Amount: must be greater than or equal to 0.',
        ]);
        await rejectsWithoutTrace(ctx, () => ctx.ledger.credit('acme', ctx.sub, { amount: 1 }), [
          'Memo: cannot be blank.',
        ]);
      });

      it('records an external payment as a manual payment that lowers the balance', async () => {
        const ctx = await setup();
        await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: -13989, adjustmentMethod: 'target' });
        const payment = await ctx.ledger.recordExternalPayment('acme', ctx.sub, {
          amountInCents: 1000,
          memo: 'cheque',
        });
        expect(payment).toMatchObject({
          type: 'payment',
          kind: 'manual',
          success: true,
          amountInCents: 1000,
          memo: 'cheque',
          startingBalanceInCents: -13989,
          endingBalanceInCents: -14989,
        });
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.recordExternalPayment('acme', ctx.sub, { amountInCents: 'x' }),
          ['Amount: is not a number.'],
        );
        await rejectsWithoutTrace(ctx, () => ctx.ledger.recordExternalPayment('acme', ctx.sub, { amount: '-1' }), [
          'Amount: must be greater than or equal to 0.',
        ]);
      });
    });

    describe('refunds', () => {
      const payment = async (ctx: { f: EngineFixture; siteId: number }, id: number) =>
        (await ctx.f.storage.transaction((tx) => tx.ledger.findById(ctx.siteId, id)))!;

      it('T4: a refund of 7 is one refund line of +700 through the gateway, balance unchanged', async () => {
        const ctx = await setup();
        const before = await trace(ctx.f, ctx.siteId, ctx.sub);
        const refund = await ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId, amount: 7, memo: 'Sorry' });
        expect(refund).toMatchObject({
          type: 'refund',
          kind: null,
          amountInCents: 700,
          paymentId: ctx.paymentId,
          success: true,
          memo: 'Sorry',
        });
        expect(refund.gatewayTransactionId).toMatch(/^rf_/);
        expect(refund.startingBalanceInCents).toBe(before.balance);
        expect(refund.endingBalanceInCents).toBe(before.balance);
        expect((await lines(ctx.f, ctx.sub)).length).toBe(before.lines + 1);
        expect((await payment(ctx, ctx.paymentId)).refundedAmountInCents).toBe(700);
        expect(ctx.gateway.refunds.map((r) => r.amountInCents)).toEqual([700]);
        const [event] = eventsOf(ctx.events, 'refund_success');
        expect(event?.payload).toEqual({
          subscription_id: ctx.sub,
          refund_id: refund.id,
          amount_in_cents: 700,
          payment_id: ctx.paymentId,
          payment_amount_in_cents: 1000,
          memo: 'Sorry',
          gateway_used: 'bogus',
          gateway_transaction_id: refund.gatewayTransactionId,
          gateway_order_id: null,
          masked_card_number: 'XXXX-XXXX-XXXX-1111',
          customer_id: refund.customerId,
          customer_first_name: 'Ada',
          customer_last_name: 'Lovelace',
          customer_email: 'ada@example.com',
          customer_organization: null,
          customer_reference: null,
          timestamp: '2026-01-15T12:00:00.000Z',
        });
      });

      it('T5: a refund with only a payment id is "Memo: cannot be blank."', async () => {
        const ctx = await setup();
        await rejectsWithoutTrace(ctx, () => ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId }), [
          'Memo: cannot be blank.',
        ]);
      });

      it('refunds the remaining refundable amount when no amount is given', async () => {
        const ctx = await setup();
        await ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId, amountInCents: 300, memo: 'part' });
        const rest = await ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId, memo: 'rest' });
        expect(rest.amountInCents).toBe(700);
        expect((await payment(ctx, ctx.paymentId)).refundedAmountInCents).toBe(1000);
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId, memo: 'more' }),
          ['Amount: cannot exceed the remaining refundable amount.'],
        );
      });

      it('rejects bad refunds with the service messages and leaves no trace', async () => {
        const ctx = await setup();
        const refund = (input: Parameters<typeof ctx.ledger.refund>[2]) => () =>
          ctx.ledger.refund('acme', ctx.sub, input);
        const p = ctx.paymentId;
        await rejectsWithoutTrace(ctx, refund({ paymentId: p, amount: 'lots', memo: 'm' }), [
          'Amount: is not a number.',
        ]);
        await rejectsWithoutTrace(ctx, refund({ paymentId: p, amount: null, memo: 'm' }), ['Amount: is not a number.']);
        await rejectsWithoutTrace(ctx, refund({ paymentId: p, amount: '-5', memo: 'm' }), [
          'Amount: must be greater than or equal to 0.',
        ]);
        await rejectsWithoutTrace(ctx, refund({ paymentId: p, amountInCents: 0, memo: 'm' }), [
          'Amount: must be greater than 0.',
        ]);
        await rejectsWithoutTrace(ctx, refund({ paymentId: p, amountInCents: 1001, memo: 'm' }), [
          'Amount: cannot exceed the remaining refundable amount.',
        ]);
        await rejectsWithoutTrace(ctx, refund({ amountInCents: 100, memo: 'm' }), ['Payment: cannot be blank.']);
        await rejectsWithoutTrace(ctx, refund({ paymentId: p, amount: 'x' }), [
          'Memo: cannot be blank.',
          'Amount: is not a number.',
        ]);
      });

      it('finds only successful payment lines of this subscription (404 otherwise)', async () => {
        const ctx = await setup();
        const other = await paidSubscription(ctx.f.engine, 'acme', 'other@example.com');
        const charge = (await lines(ctx.f, ctx.sub)).find((l) => l.type === 'charge')!;
        for (const paymentId of [other.paymentId, charge.id, 987_654]) {
          await rejectsWithoutTrace(
            ctx,
            () => ctx.ledger.refund('acme', ctx.sub, { paymentId, amountInCents: 100, memo: 'm' }),
            [`Payment ${paymentId} not found.`],
            'not_found',
          );
        }
        ctx.f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'charge:' });
        const declined = await rejection(ctx.ledger.charge('acme', ctx.sub, { amountInCents: 100, memo: 'no' }));
        const infoId = declined.data.infoId as number;
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.refund('acme', ctx.sub, { paymentId: infoId, amountInCents: 100, memo: 'm' }),
          [`Payment ${infoId} not found.`],
          'not_found',
        );
        expect((await payment(ctx, other.paymentId)).refundedAmountInCents).toBe(0);
      });

      it('releases the reservation when the gateway refuses the refund, and records refund_failure', async () => {
        const ctx = await setup();
        ctx.gateway.refundPlan.push('fail');
        const before = await trace(ctx.f, ctx.siteId, ctx.sub);
        const error = await rejection(
          ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId, amountInCents: 400, memo: 'Oops' }),
        );
        expect(error.code).toBe('gateway_error');
        expect(error.message).toBe('Bogus Gateway: refund declined (Oops)');
        const after = await trace(ctx.f, ctx.siteId, ctx.sub);
        expect(after.lines).toBe(before.lines);
        expect(after.refunded).toEqual(before.refunded);
        expect((await payment(ctx, ctx.paymentId)).refundedAmountInCents).toBe(0);
        const [failure] = eventsOf(ctx.events, 'refund_failure');
        expect(failure?.payload).toMatchObject({
          refund_id: null,
          amount_in_cents: 400,
          payment_id: ctx.paymentId,
          payment_amount_in_cents: 1000,
          memo: 'Oops',
          errors: ['Bogus Gateway: refund declined (Oops)'],
        });
        expect(eventsOf(ctx.events, 'refund_success')).toHaveLength(0);
        const full = await ctx.ledger.refund('acme', ctx.sub, {
          paymentId: ctx.paymentId,
          amountInCents: 1000,
          memo: 'All',
        });
        expect(full.amountInCents).toBe(1000);
      });

      it('keeps the reservation of an unanswered refund and settles it by reconciliation', async () => {
        const ctx = await setup();
        ctx.gateway.refundPlan.push('throw');
        const error = await rejection(
          ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId, amountInCents: 400, memo: 'Lost' }),
        );
        expect(error.code).toBe('gateway_error');
        expect(error.data).toMatchObject({ pending: true });
        expect((await payment(ctx, ctx.paymentId)).refundedAmountInCents).toBe(400);
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId, amountInCents: 601, memo: 'too much' }),
          ['Amount: cannot exceed the remaining refundable amount.'],
        );
        const attemptId = error.data.attemptId as number;
        const [row] = await ctx.f.storage.transaction((tx) =>
          tx.dueWork.pendingFor(ctx.siteId, attemptId, ['reconcile_payment']),
        );
        expect(await ctx.ledger.reconcile(row!)).toBe('succeeded');
        expect((await lines(ctx.f, ctx.sub)).at(-1)).toMatchObject({
          type: 'refund',
          amountInCents: 400,
          paymentId: ctx.paymentId,
        });
        expect((await payment(ctx, ctx.paymentId)).refundedAmountInCents).toBe(400);
        expect(await ctx.ledger.reconcile(row!)).toBe('settled');
        expect(ctx.gateway.refunds).toHaveLength(1);
      });

      it('reconciles an unanswered refund the gateway then refuses by releasing the reservation', async () => {
        const ctx = await setup();
        ctx.gateway.refundPlan.push('throw', 'fail');
        const error = await rejection(
          ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId, amountInCents: 400, memo: 'Lost' }),
        );
        const [row] = await ctx.f.storage.transaction((tx) =>
          tx.dueWork.pendingFor(ctx.siteId, error.data.attemptId as number, ['reconcile_payment']),
        );
        expect(await ctx.ledger.reconcile(row!)).toBe('failed');
        expect((await payment(ctx, ctx.paymentId)).refundedAmountInCents).toBe(0);
      });

      it('refuses gateway refunds when the gateway cannot refund or the payment was external', async () => {
        const ctx = await setup();
        const manual = await ctx.ledger.recordExternalPayment('acme', ctx.sub, { amountInCents: 500, memo: 'cheque' });
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.refund('acme', ctx.sub, { paymentId: manual.id, amountInCents: 100, memo: 'm' }),
          ['Payment: was not made through the gateway; record an external refund instead.'],
        );
        ctx.gateway.supportsRefunds = false;
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId, amountInCents: 100, memo: 'm' }),
          ['Refund: the payment gateway does not support refunds; record an external refund instead.'],
        );
        const external = await ctx.ledger.refund('acme', ctx.sub, {
          paymentId: ctx.paymentId,
          amountInCents: 100,
          memo: 'by cheque',
          external: true,
        });
        expect(external).toMatchObject({
          type: 'refund',
          kind: 'manual',
          amountInCents: 100,
          paymentId: ctx.paymentId,
          gatewayTransactionId: null,
        });
        expect(ctx.gateway.refunds).toEqual([]);
        expect((await payment(ctx, ctx.paymentId)).refundedAmountInCents).toBe(100);
        const ofManual = await ctx.ledger.refund('acme', ctx.sub, {
          paymentId: manual.id,
          amountInCents: 500,
          memo: 'back',
          external: true,
        });
        expect(ofManual.amountInCents).toBe(500);
        await rejectsWithoutTrace(
          ctx,
          () =>
            ctx.ledger.refund('acme', ctx.sub, {
              paymentId: manual.id,
              amountInCents: 1,
              memo: 'more',
              external: true,
            }),
          ['Amount: cannot exceed the remaining refundable amount.'],
        );
      });

      it('records an external refund without a payment: kind manual, no gateway call, balance unchanged', async () => {
        const ctx = await setup();
        const before = await trace(ctx.f, ctx.siteId, ctx.sub);
        const refund = await ctx.ledger.refund('acme', ctx.sub, {
          amount: '5.00',
          memo: 'Refunded by cheque',
          external: true,
        });
        expect(refund).toMatchObject({
          type: 'refund',
          kind: 'manual',
          amountInCents: 500,
          paymentId: null,
          success: true,
        });
        expect(refund.endingBalanceInCents).toBe(before.balance);
        expect(ctx.gateway.refunds).toEqual([]);
        const [event] = eventsOf(ctx.events, 'refund_success');
        expect(event?.payload).toMatchObject({
          refund_id: refund.id,
          payment_id: null,
          gateway_used: null,
          amount_in_cents: 500,
        });
        await rejectsWithoutTrace(
          ctx,
          () => ctx.ledger.refund('acme', ctx.sub, { memo: 'no amount', external: true }),
          ['Amount: is not a number.'],
        );
      });

      it('never refunds more than a payment across 10 concurrent refunds', async () => {
        const ctx = await setup();
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, (_, i) =>
            ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId, amountInCents: 300, memo: `r${i}` }),
          ),
        );
        const won = results.filter((r): r is PromiseFulfilledResult<TransactionRecord> => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(3);
        for (const loser of lost) {
          expect((loser.reason as BillingError).messages).toEqual([
            'Amount: cannot exceed the remaining refundable amount.',
          ]);
        }
        expect((await payment(ctx, ctx.paymentId)).refundedAmountInCents).toBe(900);
        const refunds = (await lines(ctx.f, ctx.sub)).filter((l) => l.type === 'refund');
        expect(refunds.reduce((sum, l) => sum + l.amountInCents, 0)).toBe(900);
        expect(ctx.gateway.refunds.reduce((sum, r) => sum + r.amountInCents, 0)).toBe(900);
      });
    });

    describe('transaction list', () => {
      it('filters by type, kind, ids and local dates, orders and pages as reference §7.1 says', async () => {
        const ctx = await setup();
        const acme = ctx.f.engine.site('acme');
        const second = await paidSubscription(ctx.f.engine, 'acme', 'two@example.com');
        // 2026-01-15 23:00 in New York is already the 16th in UTC: it belongs to the local 15th.
        ctx.f.clock.set('2026-01-16T04:00:00Z');
        const lateCredit = await ctx.ledger.credit('acme', ctx.sub, { amountInCents: 100, memo: 'late on the 15th' });
        ctx.f.clock.set('2026-01-16T05:00:00Z');
        const nextDay = await ctx.ledger.charge('acme', ctx.sub, { amountInCents: 200, memo: 'on the 16th' });
        // A charge made 40 days in, before the renewal due at 30 days is processed: the renewal
        // lines carry their due instant, so created_at order differs from id order.
        ctx.f.clock.set('2026-02-24T12:00:00Z');
        const early = await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 5 });
        await ctx.f.engine.runDue();
        const all = await lines(ctx.f, ctx.sub);
        const renewal = all.filter((l) => l.id > early.id);
        expect(renewal.length).toBeGreaterThan(0);
        expect(renewal[0]!.createdAt.getTime()).toBeLessThan(early.createdAt.getTime());

        const ids = (list: readonly TransactionRecord[]) => list.map((l) => l.id);
        const desc = (list: readonly TransactionRecord[]) => [...ids(list)].sort((a, b) => b - a);
        const mine = await ctx.ledger.transactions('acme', { subscriptionId: ctx.sub, perPage: 100 });
        expect(ids(mine)).toEqual(desc(all));
        const site = await ctx.ledger.transactions('acme', { perPage: 100 });
        const secondLines = await acme.subscriptions.transactions(second.id);
        expect(ids(site)).toEqual(desc([...all, ...secondLines]));
        expect(
          ids(await ctx.ledger.transactions('acme', { subscriptionId: ctx.sub, direction: 'asc', perPage: 100 })),
        ).toEqual(ids(all));

        const byType = await ctx.ledger.transactions('acme', {
          subscriptionId: ctx.sub,
          types: ['credit', 'adjustment'],
          direction: 'asc',
        });
        expect(ids(byType)).toEqual([lateCredit.id, early.id]);
        const byKind = await ctx.ledger.transactions('acme', { kinds: ['one_time'], direction: 'asc' });
        expect(byKind.map((l) => [l.type, l.kind, l.amountInCents])).toEqual([
          ['charge', 'one_time', 200],
          ['payment', 'one_time', 200],
        ]);

        const byIds = await ctx.ledger.transactions('acme', {
          subscriptionId: ctx.sub,
          sinceId: lateCredit.id,
          maxId: nextDay.id,
          orderBy: 'created_at',
          direction: 'asc',
        });
        expect(ids(byIds)).toEqual(ids(all.filter((l) => l.id >= lateCredit.id && l.id <= nextDay.id)));

        const byCreated = await ctx.ledger.transactions('acme', {
          subscriptionId: ctx.sub,
          orderBy: 'created_at',
          direction: 'asc',
          perPage: 100,
        });
        const chronological = [...all].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id - b.id);
        expect(ids(byCreated)).toEqual(ids(chronological));
        expect(ids(byCreated)).not.toEqual(ids(all));

        const the15th = await ctx.ledger.transactions('acme', {
          subscriptionId: ctx.sub,
          sinceDate: '2026-01-15',
          untilDate: '2026-01-15',
          direction: 'asc',
        });
        expect(ids(the15th)).toEqual(ids(all.filter((l) => l.createdAt.getTime() <= lateCredit.createdAt.getTime())));
        expect(ids(the15th)).toContain(lateCredit.id);
        const from16th = await ctx.ledger.transactions('acme', {
          subscriptionId: ctx.sub,
          sinceDate: '2026-01-16',
          untilDate: '2026-02-23',
          direction: 'asc',
        });
        expect(from16th[0]?.id).toBe(nextDay.id);
        expect(ids(from16th)).not.toContain(lateCredit.id);
        expect(ids(from16th)).not.toContain(early.id);
        // A date filter forces created_at order even when id order is asked for.
        const dated = await ctx.ledger.transactions('acme', {
          subscriptionId: ctx.sub,
          sinceDate: '2026-01-01',
          orderBy: 'id',
          direction: 'asc',
          perPage: 100,
        });
        expect(ids(dated)).toEqual(ids(chronological));
      });

      it('pages 20 by default and clamps per page to 200', async () => {
        const ctx = await setup();
        for (let i = 0; i < 205; i++) await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: 1 });
        const all = await lines(ctx.f, ctx.sub);
        expect(all.length).toBe(207);
        expect(await ctx.ledger.transactions('acme', { subscriptionId: ctx.sub })).toHaveLength(20);
        const first = await ctx.ledger.transactions('acme', { subscriptionId: ctx.sub, perPage: 500 });
        expect(first).toHaveLength(200);
        const second = await ctx.ledger.transactions('acme', { subscriptionId: ctx.sub, perPage: '500', page: 2 });
        expect(second.map((l) => l.id)).toEqual(
          all
            .slice(0, 7)
            .map((l) => l.id)
            .reverse(),
        );
        expect(await ctx.ledger.transactions('acme', { subscriptionId: ctx.sub, page: 3, perPage: 200 })).toEqual([]);
      });

      it('rejects bad filters and unknown subscriptions', async () => {
        const ctx = await setup();
        const list = (input: Parameters<typeof ctx.ledger.transactions>[1]) =>
          rejection(ctx.ledger.transactions('acme', input));
        expect((await list({ sinceDate: '2026-02-30' })).messages).toEqual(['Since date: is not a valid date.']);
        expect((await list({ untilDate: '15/01/2026' })).messages).toEqual(['Until date: is not a valid date.']);
        expect((await list({ types: ['charge', 'bogus'] })).messages).toEqual([
          "Kinds: 'bogus' is not a transaction type.",
        ]);
        expect((await list({ page: 0 })).messages).toEqual(['Page: must be a positive integer.']);
        expect((await list({ perPage: 'ten' })).messages).toEqual(['Per page: must be a positive integer.']);
        expect((await list({ sinceId: -1 })).messages).toEqual(['Since id: must be a non-negative integer.']);
        expect((await list({ orderBy: 'amount' })).messages).toEqual(['Order by: must be id or created_at.']);
        expect((await list({ direction: 'up' })).messages).toEqual(['Direction: must be asc or desc.']);
        expect((await list({ subscriptionId: 987_654 })).code).toBe('not_found');
      });
    });

    describe('notes', () => {
      it('creates, lists, reads, updates and deletes notes of a subscription', async () => {
        const ctx = await setup();
        const note = await ctx.notes.create('acme', ctx.sub, { body: 'Called the customer' });
        expect(note).toMatchObject({ subscriptionId: ctx.sub, body: 'Called the customer', sticky: false });
        const sticky = await ctx.notes.create('acme', ctx.sub, { body: 'VIP', sticky: true });
        expect(sticky.sticky).toBe(true);
        expect((await ctx.notes.list('acme', ctx.sub)).map((n) => n.id)).toEqual([note.id, sticky.id]);
        expect(await ctx.notes.get('acme', ctx.sub, note.id)).toEqual(note);
        ctx.f.clock.advance({ minutes: 5 });
        const updated = await ctx.notes.update('acme', ctx.sub, note.id, { sticky: true });
        expect(updated).toMatchObject({ body: 'Called the customer', sticky: true });
        expect(updated.updatedAt.getTime()).toBe(note.createdAt.getTime() + 5 * 60_000);
        const rewritten = await ctx.notes.update('acme', ctx.sub, note.id, { body: 'Called twice' });
        expect(rewritten).toMatchObject({ body: 'Called twice', sticky: true });
        await ctx.notes.delete('acme', ctx.sub, note.id);
        expect((await ctx.notes.list('acme', ctx.sub)).map((n) => n.id)).toEqual([sticky.id]);
        expect((await rejection(ctx.notes.get('acme', ctx.sub, note.id))).code).toBe('not_found');
      });

      it('validates notes and keeps them to their subscription', async () => {
        const ctx = await setup();
        const other = await paidSubscription(ctx.f.engine, 'acme', 'other@example.com');
        const note = await ctx.notes.create('acme', ctx.sub, { body: 'mine' });
        const blank = await rejection(ctx.notes.create('acme', ctx.sub, { body: '  ' }));
        expect(blank.messages).toEqual(['Body: cannot be blank.']);
        expect((await rejection(ctx.notes.create('acme', ctx.sub, {}))).messages).toEqual(['Body: cannot be blank.']);
        const sticky = await rejection(
          ctx.notes.create('acme', ctx.sub, { body: 'x', sticky: 'yes' as unknown as boolean }),
        );
        expect(sticky.messages).toEqual(['Sticky: must be true or false.']);
        expect((await rejection(ctx.notes.update('acme', ctx.sub, note.id, { body: '' }))).messages).toEqual([
          'Body: cannot be blank.',
        ]);
        expect(await ctx.notes.list('acme', ctx.sub)).toEqual([note]);
        expect((await rejection(ctx.notes.get('acme', other.id, note.id))).code).toBe('not_found');
        expect((await rejection(ctx.notes.update('acme', other.id, note.id, { body: 'x' }))).code).toBe('not_found');
        expect((await rejection(ctx.notes.delete('acme', other.id, note.id))).code).toBe('not_found');
        expect((await rejection(ctx.notes.list('acme', 987_654))).code).toBe('not_found');
        expect(await ctx.notes.get('acme', ctx.sub, note.id)).toEqual(note);
        await ctx.notes.update('acme', ctx.sub, note.id, { body: 'once', uniquenessToken: 'note-tok' });
        const dup = await rejection(
          ctx.notes.update('acme', ctx.sub, note.id, { body: 'twice', uniquenessToken: 'note-tok' }),
        );
        expect(dup.code).toBe('duplicate_submission');
        expect((await ctx.notes.get('acme', ctx.sub, note.id)).body).toBe('once');
      });
    });

    describe('referral codes', () => {
      it('validates a subscription referral code of the site, 404 "Invalid referral code." otherwise', async () => {
        const ctx = await setup();
        await seedSite(ctx.f.engine, 'beta');
        const other = await paidSubscription(ctx.f.engine, 'beta');
        const betaId = (await ctx.f.engine.site('beta').info()).id;
        const setCode = (siteId: number, id: number, code: string) =>
          ctx.f.storage.transaction(async (tx) => {
            const current = await tx.subscriptions.findById(siteId, id);
            await tx.subscriptions.updateAtVersion(siteId, id, current!.version, { referralCode: code });
          });
        await setCode(ctx.siteId, ctx.sub, 'ABCD2345');
        await setCode(betaId, other.id, 'ZZZZ9999');
        expect(await ctx.referrals.validate('acme', 'ABCD2345')).toEqual({
          id: ctx.sub,
          siteId: ctx.siteId,
          subscriptionId: ctx.sub,
          code: 'ABCD2345',
        });
        expect((await ctx.referrals.validate('acme', ' abcd2345 ')).subscriptionId).toBe(ctx.sub);
        for (const code of ['NOPE', 'ZZZZ9999', '']) {
          const error = await rejection(ctx.referrals.validate('acme', code));
          expect(error.code).toBe('not_found');
          expect(error.message).toBe('Invalid referral code.');
          expect(error.shape).toBe('string');
          expect(error.httpStatus).toBe(404);
        }
      });

      it('generates 8-character codes from the unambiguous alphabet, deterministic for a fixed source', () => {
        expect(REFERRAL_CODE_ALPHABET).toHaveLength(32);
        expect(REFERRAL_CODE_ALPHABET).not.toMatch(/[01IO]/);
        expect(new Set(REFERRAL_CODE_ALPHABET).size).toBe(32);
        const counting = (size: number) => Uint8Array.from({ length: size }, (_, i) => i);
        expect(generateReferralCode(counting)).toBe('ABCDEFGH');
        expect(generateReferralCode((size) => new Uint8Array(size).fill(255))).toBe('99999999');
        expect(generateReferralCode((size) => new Uint8Array(size).fill(32))).toBe('AAAAAAAA');
        let next = 0;
        const sweep = (size: number) => Uint8Array.from({ length: size }, () => next++ % 256);
        const seen = new Set<string>();
        for (let i = 0; i < 4; i++) for (const c of generateReferralCode(sweep)) seen.add(c);
        expect(seen.size).toBe(32);
        const code = generateReferralCode((size) => crypto.getRandomValues(new Uint8Array(size)));
        expect(code).toMatch(new RegExp(`^[${REFERRAL_CODE_ALPHABET}]{${REFERRAL_CODE_LENGTH}}$`));
        expect(() => generateReferralCode(() => new Uint8Array(3))).toThrow(/Random source returned 3 bytes/);
      });
    });

    it('keeps every line chained and the balance equal to the signed sum after a mixed session', async () => {
      const ctx = await setup();
      await ctx.ledger.charge('acme', ctx.sub, { amountInCents: 700, memo: 'a' });
      await ctx.ledger.adjust('acme', ctx.sub, { amountInCents: -250 });
      await ctx.ledger.credit('acme', ctx.sub, { amountInCents: 100, memo: 'c' });
      await ctx.ledger.recordExternalPayment('acme', ctx.sub, { amountInCents: 50 });
      await ctx.ledger.refund('acme', ctx.sub, { paymentId: ctx.paymentId, amountInCents: 10, memo: 'r' });
      const all = await lines(ctx.f, ctx.sub);
      let running = 0;
      for (const l of all) {
        expect(l.startingBalanceInCents).toBe(running);
        running += signedEffect(l);
        expect(l.endingBalanceInCents).toBe(running);
      }
      expect(await balance(ctx.f, ctx.sub)).toBe(running);
      expect(running).toBe(-400);
    });
  });
}
