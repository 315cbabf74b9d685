import { randomUUID } from 'node:crypto';
import { parseMajorAmount, parseMinorAmount } from '../domain/money/index.js';
import { endOfLocalDay, parseLocalDate } from '../domain/time/index.js';
import { BillingError, invalid, notFound, ValidationCollector } from '../errors.js';
import { isOpenAttempt, lookUpByKey, reconcileByKey } from '../payments/collect.js';
import type { ChargeResult, RefundResult } from '../ports/gateway.js';
import type {
  DueWorkRecord,
  PaymentAttemptRecord,
  PaymentProfileRecord,
  SiteRecord,
  SubscriptionRecord,
  SubscriptionState,
  TransactionFilter,
  TransactionRecord,
  TransactionType,
} from '../ports/storage.js';
import { type CommandContext, runCommand } from './command-runner.js';
import { optionalMemo, positiveInteger } from './input-fields.js';
import { settleIfPaid } from './lifecycle-service.js';
import {
  chargeAttempt,
  pendingAttempt,
  releaseOpenCollection,
  scheduleReconciliation,
  type UncommittedPaymentPlan,
} from './payment-runner.js';
import { collectableAmount, post } from './posting.js';
import { loadSite } from './site-lookup.js';
import { line, loadSubscription, recordPayment, type SubscriptionDeps } from './subscription-service.js';
import { claimUniquenessToken } from './uniqueness.js';

/**
 * An amount as the wire gives it: `amount` in major units (a decimal string or number) or
 * `amountInCents` in minor units. When both are present `amountInCents` wins;
 * `null` counts as absent so that `{amount: null}` reports "Amount: is not a number." (T3).
 */
export interface AmountFields {
  readonly amount?: string | number | null;
  readonly amountInCents?: string | number | null;
}

/** Input of {@link LedgerService.charge}. */
export interface ChargeInput extends AmountFields {
  /** Required: the reason shown on the charge line. */
  readonly memo?: string | null;
  /** Accrue the charge to the next renewal (kind `delay_capture`) instead of collecting it now. */
  readonly delayCapture?: boolean;
  /** Keep the charge on the balance even when its payment fails (default false). Not with `delayCapture`. */
  readonly accrueOnFailure?: boolean;
  /** Use existing credit (a negative balance) first and collect only the rest. */
  readonly useNegativeBalance?: boolean;
  /** Duplicate prevention: a repeat within 60 minutes is refused with 409. */
  readonly uniquenessToken?: string | null;
}

/** Input of {@link LedgerService.adjust}. */
export interface AdjustmentInput extends AmountFields {
  /** Optional, at most 255 characters. */
  readonly memo?: string | null;
  /** `target` sets the balance to the amount; the default `delta` moves it by the amount. */
  readonly adjustmentMethod?: 'target' | 'delta' | null;
  /** Duplicate prevention. */
  readonly uniquenessToken?: string | null;
}

/** Input of {@link LedgerService.credit} and {@link LedgerService.recordExternalPayment}. */
export interface CreditInput extends AmountFields {
  /** Required for credits, optional for external payments. */
  readonly memo?: string | null;
  /** Duplicate prevention. */
  readonly uniquenessToken?: string | null;
}

/** Input of {@link LedgerService.refund}. */
export interface RefundInput extends AmountFields {
  /** The ledger id of a payment line of this subscription; required unless `external`. */
  readonly paymentId?: number | null;
  /** Required. */
  readonly memo?: string | null;
  /** Record a refund made outside the gateway (kind `manual`); the gateway is not called. */
  readonly external?: boolean;
  /** Duplicate prevention. */
  readonly uniquenessToken?: string | null;
  /** The invoice whose payment this returns (`site.invoices.refund`): its credit note is issued first. */
  readonly invoiceUid?: string;
}

/** Input of {@link LedgerService.transactions}. */
export interface TransactionListInput {
  /** Only this subscription's lines (the per-subscription list); the whole site when absent. */
  readonly subscriptionId?: number;
  /** Transaction types; the wire's `kinds[]` parameter carries these (`kinds[]=charge`). */
  readonly types?: readonly string[];
  /** Line kinds (`one_time`, `manual`, ...). */
  readonly kinds?: readonly string[];
  /** Inclusive lower id bound; forces id order. */
  readonly sinceId?: number | string;
  /** Inclusive upper id bound; forces id order. */
  readonly maxId?: number | string;
  /** `YYYY-MM-DD` in the site's zone, inclusive from the start of that day; forces created_at order. */
  readonly sinceDate?: string;
  /** `YYYY-MM-DD` in the site's zone, inclusive to the end of that day; forces created_at order. */
  readonly untilDate?: string;
  /** `id` (default) or `created_at`. */
  readonly orderBy?: string;
  /** `desc` (default, newest first) or `asc`. */
  readonly direction?: string;
  /** 1-based page (default 1). */
  readonly page?: number | string;
  /** Page size, default 20, clamped to 1..200. */
  readonly perPage?: number | string;
}

/** What {@link LedgerService.reconcile} did with one unresolved payment attempt. */
export type ReconcileOutcome = 'succeeded' | 'failed' | 'unknown' | 'settled';

/** States in which a subscription accepts no charges or credits. */
const CLOSED_STATES: readonly SubscriptionState[] = ['cancelled', 'expired'];

/** Maximum memo length of an adjustment. */
const MAX_ADJUSTMENT_MEMO = 255;

const DEFAULT_PER_PAGE = 20;
const MAX_PER_PAGE = 200;

const TRANSACTION_TYPES: readonly TransactionType[] = ['charge', 'credit', 'adjustment', 'payment', 'refund', 'info'];

const OVER_REFUND = 'Amount: cannot exceed the remaining refundable amount.';

/** What a charge's outcome step needs; also the payload of its reconciliation row. */
interface ChargePlan {
  readonly type: 'charge';
  readonly key: string;
  readonly subscriptionId: number;
  readonly chargeInCents: number;
  readonly memo: string;
  readonly accrueOnFailure: boolean;
  /**
   * A card payment of this open invoice (`site.invoices.recordPayment` with method `payment`): no
   * charge line is posted (the invoice already billed its lines), and the payment line, of kind
   * `invoice_payment`, pays this invoice first.
   */
  readonly invoiceUid?: string;
}

/** What a gateway refund's outcome step needs; also the payload of its reconciliation row. */
interface RefundPlan {
  readonly type: 'refund';
  readonly key: string;
  readonly subscriptionId: number;
  readonly paymentId: number;
  readonly amountInCents: number;
  readonly memo: string;
  /** The invoice the refund's credit note goes to first, when the caller named one. */
  readonly invoiceUid?: string;
}

/** A charge or refund outcome that is known (not `unknown`). */
type SettledCharge = Exclude<ChargeResult, { outcome: 'unknown' }>;

/**
 * The subscription ledger's commands: one-time charges (paid through the gateway in three steps),
 * adjustments, credits, external payments, gateway and external refunds, the transaction list and
 * the reconciliation of payment attempts whose outcome was never committed.
 *
 * Every command runs in one transaction; a command that calls the gateway does so between two of
 * them: an attempt row with a deterministic key is committed first, the gateway is
 * called outside any transaction, then the outcome is committed. A reconciliation row committed
 * with the attempt and cancelled with its outcome makes a crash in between recoverable.
 */
export class LedgerService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /**
   * A one-time charge. Immediate charges commit the charge line (kind `one_time`) together with
   * its payment only when the gateway took the money; a decline commits an `info` line (success
   * false, balance unchanged) recording the failed payment, plus the charge line when
   * `accrueOnFailure`, and then rejects with `payment_declined` ("<gateway message> (<memo>)").
   * `delayCapture` commits a `delay_capture` line that the next renewal collects. Returns the
   * charge line.
   */
  async charge(subdomain: string, subscriptionId: number, input: ChargeInput): Promise<TransactionRecord> {
    // Generated once per call, so a retried first step reuses the key and never charges twice.
    const key = `charge:${subscriptionId}:${randomUUID()}`;
    const prepared = await runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await claimUniquenessToken(ctx, site.id, input.uniquenessToken);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const errors = new ValidationCollector();
      const memo = requiredMemo(input.memo, errors);
      const amount = readAmount(input, site.currency, errors);
      if (input.delayCapture === true && input.accrueOnFailure === true) {
        errors.add('Accrue on failure: cannot be combined with delay capture.', 'accrue_on_failure');
      }
      if (CLOSED_STATES.includes(subscription.state))
        errors.add('This subscription is not eligible to accept charges.');
      errors.throwIfAny();
      const chargeInCents = amount!;
      if (input.delayCapture === true) {
        const [written] = await post(ctx.tx, [
          line(subscription, 'charge', 'delay_capture', chargeInCents, memo!, ctx.now),
        ]);
        return { kind: 'done' as const, charge: written! };
      }
      const balance = await ctx.tx.ledger.balance(site.id, subscription.id);
      const credit = input.useNegativeBalance === true ? Math.max(0, -balance) : 0;
      // A remittance subscription is never charged: its charge is invoiced and left open.
      const collect = collectableAmount(subscription, Math.max(0, chargeInCents - credit));
      if (collect === 0) {
        // Nothing to collect (a zero charge, credit covers it, or remittance): the charge line alone.
        const [written] = await post(ctx.tx, [line(subscription, 'charge', 'one_time', chargeInCents, memo!, ctx.now)]);
        return { kind: 'done' as const, charge: written! };
      }
      const plan: ChargePlan = {
        type: 'charge',
        key,
        subscriptionId: subscription.id,
        chargeInCents,
        memo: memo!,
        accrueOnFailure: input.accrueOnFailure === true,
      };
      const attempt = await insertAttempt(ctx, site, subscription, key, collect, 'charge');
      await scheduleReconcile(ctx, attempt, plan);
      const profile =
        subscription.paymentProfileId === null
          ? undefined
          : await ctx.tx.customers.findPaymentProfile(site.id, subscription.paymentProfileId);
      return { kind: 'pay' as const, site, attempt, plan, profile };
    });
    if (prepared.kind === 'done') return prepared.charge;
    return (await this.#collectCharge(prepared)).charge!;
  }

  /**
   * Pays (part of) an open invoice with the subscription's card, through the same three steps as
   * a one-time charge: the attempt and its reconciliation committed first, the gateway called
   * outside any transaction, the outcome committed after. A success posts a `payment` line (kind
   * `invoice_payment`) that pays the invoice; a decline posts an `info` line and rejects with
   * `payment_declined`; no answer leaves the attempt to its reconciliation. The invoice must be
   * the subscription's, open, and owe at least the amount; the caller checks the rest. Returns
   * the payment line.
   */
  async payInvoice(
    subdomain: string,
    subscriptionId: number,
    input: { readonly invoiceUid: string; readonly amountInCents: number; readonly memo: string },
  ): Promise<TransactionRecord> {
    const key = `invoice_payment:${subscriptionId}:${randomUUID()}`;
    const prepared = await runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const invoice = await ctx.tx.invoices.findByUid(site.id, input.invoiceUid);
      if (invoice === undefined || invoice.subscriptionId !== subscription.id)
        throw invalid('Invoice: is not a invoice of this subscription.', 'invoice_uid');
      if (invoice.status !== 'open') throw invalid(`Invoice: a ${invoice.status} invoice cannot take payments.`);
      if (!Number.isSafeInteger(input.amountInCents) || input.amountInCents <= 0)
        throw invalid('Amount: must be greater than 0.', 'amount');
      if (input.amountInCents > invoice.dueInCents)
        throw invalid("Amount: cannot exceed the invoice's due amount.", 'amount');
      const plan: ChargePlan = {
        type: 'charge',
        key,
        subscriptionId: subscription.id,
        chargeInCents: input.amountInCents,
        memo: input.memo,
        accrueOnFailure: false,
        invoiceUid: invoice.uid,
      };
      const attempt = await insertAttempt(ctx, site, subscription, key, input.amountInCents, 'charge');
      await scheduleReconcile(ctx, attempt, plan);
      const profile =
        subscription.paymentProfileId === null
          ? undefined
          : await ctx.tx.customers.findPaymentProfile(site.id, subscription.paymentProfileId);
      return { site, attempt, plan, profile };
    });
    return (await this.#collectCharge(prepared)).payment!;
  }

  /** Steps 2 and 3 of a charge (one-time or invoice payment) whose attempt is committed. */
  async #collectCharge(prepared: {
    readonly site: SiteRecord;
    readonly attempt: PaymentAttemptRecord;
    readonly plan: ChargePlan;
    readonly profile: PaymentProfileRecord | undefined;
  }): Promise<{ charge?: TransactionRecord; payment?: TransactionRecord }> {
    const { site, attempt, plan, profile } = prepared;
    const key = plan.key;
    let result: ChargeResult = profile
      ? await chargeAttempt(this.#deps.gateway, attempt, profile, plan.memo)
      : { outcome: 'error', message: 'No payment profile on file.' };
    if (result.outcome === 'unknown') result = (await this.#lookup(key)) ?? result;
    if (result.outcome === 'unknown') {
      const unknown = result;
      // No answer: the money may or may not have moved. Keep the attempt and its reconciliation
      // row; `reconcile` later asks the gateway by key instead of charging again.
      await runCommand(this.#deps, async (ctx) => {
        await ctx.tx.payments.update(site.id, attempt.id, {
          status: 'unknown',
          message: unknown.message,
          updatedAt: ctx.now,
        });
      });
      throw new BillingError('gateway_error', `${unknown.message} (${plan.memo})`, {
        data: { attemptId: attempt.id, pending: true },
      });
    }
    const settled = await this.#settleCharge(site.id, plan, result);
    if (settled === 'settled') {
      throw new BillingError('conflict', 'The charge was settled by reconciliation while it was in progress.', {
        data: { attemptId: attempt.id },
      });
    }
    if (settled.error) throw settled.error;
    return settled;
  }

  /**
   * A balance adjustment: a signed amount moves the balance; with
   * `adjustmentMethod: 'target'` the balance is set to the amount and the line records the
   * difference. Target adjustments run serializable because they depend on the balance they read.
   */
  adjust(subdomain: string, subscriptionId: number, input: AdjustmentInput): Promise<TransactionRecord> {
    return runCommand(
      this.#deps,
      async (ctx) => {
        const site = await loadSite(ctx.tx, subdomain);
        await claimUniquenessToken(ctx, site.id, input.uniquenessToken);
        const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
        const errors = new ValidationCollector();
        const amount = readAmount(input, site.currency, errors, true);
        const memo = optionalMemo(input.memo, errors);
        if (memo.length > MAX_ADJUSTMENT_MEMO) {
          errors.add(`Memo: is too long (maximum is ${MAX_ADJUSTMENT_MEMO} characters).`, 'memo');
        }
        const method = input.adjustmentMethod ?? 'delta';
        if (method !== 'delta' && method !== 'target') {
          errors.add('Adjustment method: is not included in the list.', 'adjustment_method');
        }
        errors.throwIfAny();
        const balance = method === 'target' ? await ctx.tx.ledger.balance(site.id, subscription.id) : 0;
        const delta = amount! - balance;
        const [written] = await post(ctx.tx, [
          line(subscription, 'adjustment', null, delta === 0 ? 0 : delta, memo, ctx.now),
        ]);
        await settleIfPaid(ctx, site.id, subscription.id);
        return written!;
      },
      input.adjustmentMethod === 'target' ? { isolation: 'serializable' } : undefined,
    );
  }

  /**
   * A credit (the older API): a positive amount lowers the balance and is recorded
   * as a `credit` line with the negative amount. Memo required; not on cancelled or expired
   * subscriptions ("This subscription is not eligible to accept credits.").
   */
  credit(subdomain: string, subscriptionId: number, input: CreditInput): Promise<TransactionRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await claimUniquenessToken(ctx, site.id, input.uniquenessToken);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const errors = new ValidationCollector();
      const memo = requiredMemo(input.memo, errors);
      const amount = readAmount(input, site.currency, errors);
      if (CLOSED_STATES.includes(subscription.state))
        errors.add('This subscription is not eligible to accept credits.');
      errors.throwIfAny();
      // A manual credit is not billed: it is money the subscription holds, applied to its open
      // invoices (oldest first) and to later ones as they are issued.
      const [written] = await post(
        ctx.tx,
        [line(subscription, 'credit', null, amount === 0 ? 0 : -amount!, memo!, ctx.now)],
        { invoice: false },
      );
      await settleIfPaid(ctx, site.id, subscription.id);
      return written!;
    });
  }

  /**
   * Records a payment received outside the gateway: a `payment` line of kind
   * `manual` that lowers the balance. Such a payment can be refunded only externally.
   */
  recordExternalPayment(subdomain: string, subscriptionId: number, input: CreditInput): Promise<TransactionRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await claimUniquenessToken(ctx, site.id, input.uniquenessToken);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const errors = new ValidationCollector();
      const amount = readAmount(input, site.currency, errors);
      const memo = optionalMemo(input.memo, errors);
      errors.throwIfAny();
      const [written] = await post(ctx.tx, [
        line(subscription, 'payment', 'manual', amount!, memo, ctx.now, { success: true }),
      ]);
      await settleIfPaid(ctx, site.id, subscription.id);
      return written!;
    });
  }

  /**
   * A refund of a payment of this subscription. The refund line is type
   * `refund` with a positive amount and leaves the balance unchanged; the payment's refunded
   * amount grows. Without an amount the payment's whole remaining refundable amount is refunded.
   *
   * Gateway refunds reserve the amount with the race-safe `ledger.addRefunded` in the same
   * transaction that commits the pending refund attempt, so concurrent refunds can never exceed
   * the payment; the gateway is called after that commit; a success commits the refund line, a
   * failure releases the reservation (refunded amount unchanged), records `refund_failure` and
   * rejects with `gateway_error` ("<gateway message> (<memo>)"). External refunds call no
   * gateway: the line (kind `manual`) and the reservation commit together.
   */
  async refund(subdomain: string, subscriptionId: number, input: RefundInput): Promise<TransactionRecord> {
    const key = `refund:${subscriptionId}:${randomUUID()}`;
    const external = input.external === true;
    const prepared = await runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await claimUniquenessToken(ctx, site.id, input.uniquenessToken);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const errors = new ValidationCollector();
      const memo = requiredMemo(input.memo, errors);
      const hasPayment = input.paymentId !== undefined && input.paymentId !== null;
      // Without an amount a refund takes the payment's remainder, so only a payment-less refund
      // needs one; an explicit null is still "Amount: is not a number." as for credits (T3).
      const hasAmount = input.amount !== undefined || input.amountInCents !== undefined;
      const amount = hasAmount || !hasPayment ? readAmount(input, site.currency, errors) : undefined;
      if (amount === 0) errors.add('Amount: must be greater than 0.', 'amount');
      if (!hasPayment && !external) errors.add('Payment: cannot be blank.', 'payment_id');
      errors.throwIfAny();
      const payment = hasPayment ? await loadPayment(ctx, site.id, subscription.id, input.paymentId) : undefined;
      if (payment && !external) {
        if (payment.gatewayTransactionId === null) {
          throw invalid('Payment: was not made through the gateway; record an external refund instead.', 'payment_id');
        }
        if (!this.#deps.gateway.supportsRefunds) {
          throw invalid('Refund: the payment gateway does not support refunds; record an external refund instead.');
        }
      }
      const refundInCents = amount ?? payment!.amountInCents - payment!.refundedAmountInCents;
      if (payment) {
        if (refundInCents <= 0 || !(await ctx.tx.ledger.addRefunded(site.id, payment.id, refundInCents))) {
          throw invalid(OVER_REFUND, 'amount');
        }
      }
      const documents = input.invoiceUid === undefined ? {} : { refundInvoiceUid: input.invoiceUid };
      if (external) {
        const [written] = await post(
          ctx.tx,
          [
            line(subscription, 'refund', 'manual', refundInCents, memo!, ctx.now, {
              success: true,
              paymentId: payment?.id ?? null,
            }),
          ],
          documents,
        );
        await recordRefund(ctx, this.#deps.gateway.name, subscription, written!, payment, refundInCents, memo!);
        return { kind: 'done' as const, refund: written! };
      }
      const plan: RefundPlan = {
        type: 'refund',
        key,
        subscriptionId: subscription.id,
        paymentId: payment!.id,
        amountInCents: refundInCents,
        memo: memo!,
        ...(input.invoiceUid === undefined ? {} : { invoiceUid: input.invoiceUid }),
      };
      const attempt = await insertAttempt(ctx, site, subscription, key, refundInCents, 'refund');
      await scheduleReconcile(ctx, attempt, plan);
      return { kind: 'gateway' as const, site, plan, attempt, chargeTransactionId: payment!.gatewayTransactionId! };
    });
    if (prepared.kind === 'done') return prepared.refund;

    const { site, plan, attempt, chargeTransactionId } = prepared;
    const result = await this.#sendRefund(plan, site.currency, chargeTransactionId);
    if (result === undefined) {
      // No answer: the reservation stays (never over-refund) and the reconciliation row resends
      // the refund with the same idempotency key later.
      await runCommand(this.#deps, async (ctx) => {
        await ctx.tx.payments.update(site.id, attempt.id, {
          status: 'unknown',
          message: 'No response from the gateway.',
          updatedAt: ctx.now,
        });
      });
      throw new BillingError('gateway_error', `No response from the gateway. (${plan.memo})`, {
        data: { attemptId: attempt.id, pending: true },
      });
    }
    const settled = await this.#settleRefund(site.id, plan, result);
    if (settled === 'settled') {
      throw new BillingError('conflict', 'The refund was settled by reconciliation while it was in progress.', {
        data: { attemptId: attempt.id },
      });
    }
    if (settled.error) throw settled.error;
    return settled.refund!;
  }

  /**
   * Lists ledger lines of the site, or of one subscription. Id bounds and dates
   * are inclusive; dates are local days in the site's zone. An id filter forces id order and a date
   * filter created_at order (an id filter wins when both are given). Default order: id, newest first.
   */
  transactions(subdomain: string, input: TransactionListInput = {}): Promise<TransactionRecord[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      if (input.subscriptionId !== undefined) await loadSubscription(tx, site.id, input.subscriptionId);
      const errors = new ValidationCollector();
      const page = positiveInteger(input.page, 1, 'Page', errors);
      const perPage = Math.min(MAX_PER_PAGE, positiveInteger(input.perPage, DEFAULT_PER_PAGE, 'Per page', errors));
      const sinceId = optionalInteger(input.sinceId, 'Since id', errors);
      const maxId = optionalInteger(input.maxId, 'Max id', errors);
      const since =
        input.sinceDate === undefined
          ? undefined
          : errors.capture(() => parseLocalDate(input.sinceDate, site.timeZone, 'Since date'));
      const untilStart =
        input.untilDate === undefined
          ? undefined
          : errors.capture(() => parseLocalDate(input.untilDate, site.timeZone, 'Until date'));
      const types = input.types?.filter((t): t is TransactionType => {
        const known = (TRANSACTION_TYPES as readonly string[]).includes(t);
        if (!known) errors.add(`Kinds: '${t}' is not a transaction type.`, 'kinds');
        return known;
      });
      if (input.orderBy !== undefined && input.orderBy !== 'id' && input.orderBy !== 'created_at') {
        errors.add('Order by: must be id or created_at.', 'order_by');
      }
      if (input.direction !== undefined && input.direction !== 'asc' && input.direction !== 'desc') {
        errors.add('Direction: must be asc or desc.', 'direction');
      }
      errors.throwIfAny();
      const byId = sinceId !== undefined || maxId !== undefined;
      const byDate = since !== undefined || untilStart !== undefined;
      const filter: TransactionFilter = {
        ...(input.subscriptionId === undefined ? {} : { subscriptionId: input.subscriptionId }),
        ...(types === undefined ? {} : { types }),
        ...(input.kinds === undefined ? {} : { kinds: input.kinds }),
        ...(sinceId === undefined ? {} : { sinceId }),
        ...(maxId === undefined ? {} : { maxId }),
        ...(since === undefined ? {} : { since }),
        ...(untilStart === undefined ? {} : { until: endOfLocalDay(untilStart, site.timeZone) }),
        orderBy: byId ? 'id' : byDate ? 'created_at' : input.orderBy === 'created_at' ? 'created_at' : 'id',
        direction: input.direction === 'asc' ? 'asc' : 'desc',
      };
      return tx.ledger.list(site.id, filter, { page, perPage });
    });
  }

  /**
   * Resolves a charge or refund whose outcome was never committed, from its `reconcile_payment`
   * due-work row (the row's subject is the attempt id; its payload describes the command). A
   * charge is looked up at the gateway by its key and never charged again; a gateway that has no
   * record of it means it failed. A refund is resent with its idempotency key. Returns `unknown`
   * when the gateway still gives no answer (the caller releases the row for later), `settled`
   * when the attempt was already resolved, else the outcome it committed. The due-work row itself
   * is completed by the worker that claimed it.
   */
  async reconcile(work: Pick<DueWorkRecord, 'siteId' | 'payload'>): Promise<ReconcileOutcome> {
    const plan = parsePlan(work.payload);
    if (plan === undefined) {
      throw new BillingError('internal', 'A reconcile_payment row carries no charge or refund plan.', {
        data: { payload: work.payload },
      });
    }
    if (plan.type === 'charge') {
      // The same opening as every reconciliation of a lost answer: by key, never a new charge.
      const finding = await reconcileByKey(this.#deps.storage, this.#deps.gateway, work.siteId, plan.key);
      if (finding.kind !== 'known') return finding.kind;
      if (finding.result.outcome === 'unknown') return 'unknown';
      const settled = await this.#settleCharge(work.siteId, plan, finding.result);
      if (settled === 'settled') return 'settled';
      return settled.error ? 'failed' : 'succeeded';
    }
    const attempt = await this.#deps.storage.transaction((tx) => tx.payments.findByKey(work.siteId, plan.key));
    if (attempt === undefined || !isOpenAttempt(attempt.status)) return 'settled';
    if (plan.type === 'uncommitted') return this.#refundIfTaken(work.siteId, plan);
    const site = await this.#deps.storage.transaction((tx) => tx.sites.findById(work.siteId));
    const payment = await this.#deps.storage.transaction((tx) => tx.ledger.findById(work.siteId, plan.paymentId));
    if (!site || !payment?.gatewayTransactionId) return 'unknown';
    const result = await this.#sendRefund(plan, site.currency, payment.gatewayTransactionId);
    if (result === undefined) return 'unknown';
    const settled = await this.#settleRefund(work.siteId, plan, result);
    if (settled === 'settled') return 'settled';
    return settled.error ? 'failed' : 'succeeded';
  }

  /**
   * A signup or migration whose payment outcome was never committed (its process died, or the
   * answer was lost and the caller was told it failed) never took effect. Money the gateway took
   * for it is refunded; an attempt the gateway never saw is marked failed. Never charged again.
   */
  async #refundIfTaken(siteId: number, plan: UncommittedPaymentPlan): Promise<ReconcileOutcome> {
    const known = await lookUpByKey(this.#deps.gateway, plan.key);
    if (known?.outcome === 'unknown') return 'unknown';
    let chargeId: string | null = null;
    let refundRefused = false;
    let message = `The gateway has no record of the charge; the ${purposeOf(plan.key)} did not complete.`;
    if (known?.outcome === 'success') {
      chargeId = known.transactionId;
      let refund: RefundResult;
      try {
        refund = await this.#deps.gateway.refund({
          idempotencyKey: `refund:${plan.key}`,
          chargeTransactionId: known.transactionId,
          amountInCents: plan.amountInCents,
          currency: plan.currency,
        });
      } catch {
        return 'unknown';
      }
      refundRefused = refund.outcome !== 'success';
      message =
        refund.outcome === 'success'
          ? `Charged, but the ${purposeOf(plan.key)} did not complete; refunded as ${refund.transactionId}.`
          : `Charged, but the ${purposeOf(plan.key)} did not complete; the refund was refused: ${refund.message}`;
    } else if (known !== undefined) {
      message = known.message;
    }
    return runCommand(this.#deps, async (ctx) => {
      const attempt = await ctx.tx.payments.findByKey(siteId, plan.key);
      if (attempt === undefined || !isOpenAttempt(attempt.status)) return 'settled' as const;
      const kept = refundRefused ? await this.#keepRefusedRefund(ctx, attempt, chargeId, message) : undefined;
      await ctx.tx.payments.update(siteId, attempt.id, {
        status: kept === undefined ? 'failed' : 'succeeded',
        gatewayTransactionId: chargeId,
        message,
        ...(kept === undefined ? {} : { transactionId: kept.id }),
        updatedAt: ctx.now,
      });
      await ctx.tx.dueWork.cancelFor(siteId, attempt.id, ['reconcile_payment'], ctx.now);
      // The command that held its subscription's collections for this payment is over.
      if (typeof plan.claim === 'string') await releaseOpenCollection(ctx.tx, siteId, plan.claim);
      return 'failed' as const;
    });
  }

  /**
   * Money taken for a change that never took effect, whose refund the gateway refused: it stays
   * the merchant's, so it goes on the subscription's ledger as a payment (a credit the next
   * charges use, and that can be refunded like any payment), never taken without a trace. A
   * signup that did not complete has no subscription to hold it: its attempt keeps the message.
   */
  async #keepRefusedRefund(
    ctx: CommandContext,
    attempt: PaymentAttemptRecord,
    chargeId: string | null,
    message: string,
  ): Promise<TransactionRecord | undefined> {
    if (attempt.subscriptionId === null) return undefined;
    const subscription = await ctx.tx.subscriptions.findById(attempt.siteId, attempt.subscriptionId);
    if (subscription === undefined) return undefined;
    const [written] = await post(ctx.tx, [
      line(subscription, 'payment', 'unrefunded', attempt.amountInCents, message, ctx.now, {
        success: true,
        gatewayTransactionId: chargeId,
      }),
    ]);
    recordPayment(ctx, subscription, written!, true);
    return written;
  }

  /** The gateway's answer for a charge key, or undefined when it has none or cannot be asked. */
  async #lookup(key: string): Promise<ChargeResult | undefined> {
    try {
      return await this.#deps.gateway.lookup(key);
    } catch {
      return { outcome: 'unknown', message: 'No response from the gateway.' };
    }
  }

  /** Calls the gateway's refund outside any transaction; undefined when it throws (outcome unknown). */
  async #sendRefund(
    plan: RefundPlan,
    currency: string,
    chargeTransactionId: string,
  ): Promise<RefundResult | undefined> {
    try {
      return await this.#deps.gateway.refund({
        idempotencyKey: plan.key,
        chargeTransactionId,
        amountInCents: plan.amountInCents,
        currency,
      });
    } catch {
      return undefined;
    }
  }

  /**
   * Step 3 of a charge: commits a known outcome, once. Returns `settled` when the attempt was
   * already resolved (by the command or by reconciliation, whichever came second).
   */
  #settleCharge(
    siteId: number,
    plan: ChargePlan,
    result: SettledCharge,
  ): Promise<'settled' | { charge?: TransactionRecord; payment?: TransactionRecord; error?: BillingError }> {
    return runCommand(this.#deps, async (ctx) => {
      const attempt = await ctx.tx.payments.findByKey(siteId, plan.key);
      if (attempt === undefined || !isOpenAttempt(attempt.status)) return 'settled' as const;
      const subscription = await loadSubscription(ctx.tx, siteId, plan.subscriptionId);
      await ctx.tx.dueWork.cancelFor(siteId, attempt.id, ['reconcile_payment'], ctx.now);
      const forInvoice = typeof plan.invoiceUid === 'string';
      const chargeLine = line(subscription, 'charge', 'one_time', plan.chargeInCents, plan.memo, ctx.now);
      if (result.outcome === 'success') {
        const paymentLine = forInvoice
          ? line(subscription, 'payment', 'invoice_payment', attempt.amountInCents, plan.memo, ctx.now, {
              success: true,
              gatewayTransactionId: result.transactionId,
            })
          : line(subscription, 'payment', 'one_time', attempt.amountInCents, `Payment for: ${plan.memo}`, ctx.now, {
              success: true,
              gatewayTransactionId: result.transactionId,
            });
        const written = await post(
          ctx.tx,
          forInvoice ? [paymentLine] : [chargeLine, paymentLine],
          forInvoice ? { payInvoiceUid: plan.invoiceUid! } : {},
        );
        const charge = forInvoice ? undefined : written[0];
        const payment = written.at(-1);
        await ctx.tx.payments.update(siteId, attempt.id, {
          status: 'succeeded',
          gatewayTransactionId: result.transactionId,
          transactionId: payment!.id,
          updatedAt: ctx.now,
        });
        recordPayment(ctx, subscription, payment!, true);
        return { ...(charge ? { charge } : {}), payment: payment! };
      }
      // The failed payment is recorded as an `info` line: it shows in the ledger but moves no
      // balance and, not being a `payment`, can never be refunded.
      const message = `${result.message} (${plan.memo})`;
      const written = await post(ctx.tx, [
        ...(plan.accrueOnFailure && !forInvoice ? [chargeLine] : []),
        line(subscription, 'info', null, attempt.amountInCents, message, ctx.now, { success: false }),
      ]);
      const info = written.at(-1)!;
      await ctx.tx.payments.update(siteId, attempt.id, {
        status: result.outcome === 'declined' ? 'declined' : 'failed',
        message: result.message,
        updatedAt: ctx.now,
      });
      ctx.record({
        siteId,
        key: 'payment_failure',
        subjectType: 'subscription',
        subjectId: subscription.id,
        payload: {
          subscription: { id: subscription.id, state: subscription.state },
          transaction: { id: info.id, amount_in_cents: info.amountInCents, memo: info.memo, success: false },
          message: result.message,
        },
      });
      const charge = plan.accrueOnFailure ? written[0] : undefined;
      const error = new BillingError(result.outcome === 'declined' ? 'payment_declined' : 'gateway_error', message, {
        data: { attemptId: attempt.id, infoId: info.id, ...(charge ? { chargeId: charge.id } : {}) },
      });
      return { ...(charge ? { charge } : {}), error };
    });
  }

  /**
   * Step 3 of a gateway refund: commits the refund line on success, or releases the reservation on
   * failure, once. Returns `settled` when the attempt was already resolved.
   */
  #settleRefund(
    siteId: number,
    plan: RefundPlan,
    result: RefundResult,
  ): Promise<'settled' | { refund?: TransactionRecord; error?: BillingError }> {
    return runCommand(this.#deps, async (ctx) => {
      const attempt = await ctx.tx.payments.findByKey(siteId, plan.key);
      if (attempt === undefined || !isOpenAttempt(attempt.status)) return 'settled' as const;
      const subscription = await loadSubscription(ctx.tx, siteId, plan.subscriptionId);
      const payment = await ctx.tx.ledger.findById(siteId, plan.paymentId);
      await ctx.tx.dueWork.cancelFor(siteId, attempt.id, ['reconcile_payment'], ctx.now);
      if (result.outcome === 'success') {
        const [refund] = await post(
          ctx.tx,
          [
            line(subscription, 'refund', null, plan.amountInCents, plan.memo, ctx.now, {
              success: true,
              paymentId: plan.paymentId,
              gatewayTransactionId: result.transactionId,
            }),
          ],
          typeof plan.invoiceUid === 'string' ? { refundInvoiceUid: plan.invoiceUid } : {},
        );
        await ctx.tx.payments.update(siteId, attempt.id, {
          status: 'succeeded',
          gatewayTransactionId: result.transactionId,
          transactionId: refund!.id,
          updatedAt: ctx.now,
        });
        await recordRefund(ctx, this.#deps.gateway.name, subscription, refund!, payment, plan.amountInCents, plan.memo);
        return { refund: refund! };
      }
      // Release exactly what the first step reserved, so the payment's refunded amount is as before.
      const released = await ctx.tx.ledger.addRefunded(siteId, plan.paymentId, -plan.amountInCents);
      if (released === undefined) {
        throw new BillingError('internal', `Payment ${plan.paymentId} vanished while its refund was pending.`);
      }
      await ctx.tx.payments.update(siteId, attempt.id, {
        status: 'failed',
        message: result.message,
        updatedAt: ctx.now,
      });
      const message = `${result.message} (${plan.memo})`;
      await recordRefund(
        ctx,
        this.#deps.gateway.name,
        subscription,
        undefined,
        released,
        plan.amountInCents,
        plan.memo,
        [message],
      );
      return { error: new BillingError('gateway_error', message, { data: { attemptId: attempt.id } }) };
    });
  }
}

/** Reads `amount` / `amountInCents` into minor units, recording problems in the service's words. */
function readAmount(
  input: AmountFields,
  currency: string,
  errors: ValidationCollector,
  allowNegative = false,
): number | undefined {
  if (present(input.amountInCents)) {
    return errors.capture(() =>
      parseMinorAmount(input.amountInCents, { field: 'Amount', allowNegative, attribute: 'amount_in_cents' }),
    );
  }
  return errors.capture(() =>
    parseMajorAmount(input.amount, currency, { field: 'Amount', allowNegative, attribute: 'amount' }),
  );
}

function present<T>(value: T | null | undefined): value is T {
  return value !== undefined && value !== null;
}

/** A required memo, trimmed; records "Memo: cannot be blank." when missing. */
function requiredMemo(memo: unknown, errors: ValidationCollector): string | undefined {
  if (typeof memo !== 'string' || memo.trim() === '') {
    errors.add('Memo: cannot be blank.', 'memo');
    return undefined;
  }
  return memo.trim();
}

function optionalInteger(value: number | string | undefined, label: string, errors: ValidationCollector) {
  if (value === undefined) return undefined;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    errors.add(`${label}: must be a non-negative integer.`);
    return undefined;
  }
  return n;
}

/** A successful payment line of this subscription; anything else is `not_found` (no cross-subscription refunds). */
async function loadPayment(
  ctx: CommandContext,
  siteId: number,
  subscriptionId: number,
  paymentId: unknown,
): Promise<TransactionRecord> {
  const id = typeof paymentId === 'string' && /^\d+$/.test(paymentId) ? Number(paymentId) : paymentId;
  const payment =
    typeof id === 'number' && Number.isSafeInteger(id) ? await ctx.tx.ledger.findById(siteId, id) : undefined;
  if (payment?.type !== 'payment' || payment.subscriptionId !== subscriptionId || payment.success === false) {
    throw notFound('Payment', String(paymentId));
  }
  return payment;
}

async function insertAttempt(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  key: string,
  amountInCents: number,
  purpose: 'charge' | 'refund',
): Promise<PaymentAttemptRecord> {
  return ctx.tx.payments.insert(
    pendingAttempt({
      siteId: site.id,
      subscriptionId: subscription.id,
      customerId: subscription.customerId,
      idempotencyKey: key,
      amountInCents,
      currency: site.currency,
      purpose,
      now: ctx.now,
    }),
  );
}

/** Schedules the reconciliation of a charge or refund attempt in the transaction that commits it. */
function scheduleReconcile(
  ctx: CommandContext,
  attempt: PaymentAttemptRecord,
  plan: ChargePlan | RefundPlan,
): Promise<void> {
  return scheduleReconciliation(ctx.tx, attempt, { ...plan }, ctx.now);
}

/** What an attempt key paid for (`signup:…`, `migration:…`), for messages. */
function purposeOf(key: string): string {
  return key.slice(0, Math.max(0, key.indexOf(':'))) || 'payment';
}

/** The plan stored in a reconciliation row, or undefined when the payload is not one. */
function parsePlan(
  payload: Readonly<Record<string, unknown>>,
): ChargePlan | RefundPlan | UncommittedPaymentPlan | undefined {
  const { type, key, subscriptionId, memo } = payload;
  if (
    type === 'uncommitted' &&
    typeof key === 'string' &&
    typeof payload.amountInCents === 'number' &&
    typeof payload.currency === 'string'
  ) {
    return {
      type,
      key,
      amountInCents: payload.amountInCents,
      currency: payload.currency,
      ...(typeof payload.claim === 'string' ? { claim: payload.claim } : {}),
    };
  }
  if (typeof key !== 'string' || typeof subscriptionId !== 'number' || typeof memo !== 'string') return undefined;
  if (type === 'charge' && typeof payload.chargeInCents === 'number') {
    return {
      type,
      key,
      subscriptionId,
      memo,
      chargeInCents: payload.chargeInCents,
      accrueOnFailure: payload.accrueOnFailure === true,
      ...(typeof payload.invoiceUid === 'string' ? { invoiceUid: payload.invoiceUid } : {}),
    };
  }
  if (type === 'refund' && typeof payload.paymentId === 'number' && typeof payload.amountInCents === 'number') {
    return { type, key, subscriptionId, memo, paymentId: payload.paymentId, amountInCents: payload.amountInCents };
  }
  return undefined;
}

/**
 * Records `refund_success` (with the refund line) or `refund_failure` (with `errors`), with the
 * flat payload the service sends for refund events; its timestamp is ISO 8601 UTC as the service's newer events use.
 */
async function recordRefund(
  ctx: CommandContext,
  gatewayName: string,
  subscription: SubscriptionRecord,
  refund: TransactionRecord | undefined,
  payment: TransactionRecord | undefined,
  amountInCents: number,
  memo: string,
  errors?: readonly string[],
): Promise<void> {
  const customer = await ctx.tx.customers.findById(subscription.siteId, subscription.customerId);
  const profile =
    subscription.paymentProfileId === null
      ? undefined
      : await ctx.tx.customers.findPaymentProfile(subscription.siteId, subscription.paymentProfileId);
  const manual = refund?.kind === 'manual';
  ctx.record({
    siteId: subscription.siteId,
    key: errors === undefined ? 'refund_success' : 'refund_failure',
    subjectType: 'subscription',
    subjectId: subscription.id,
    payload: {
      subscription_id: subscription.id,
      refund_id: refund?.id ?? null,
      amount_in_cents: amountInCents,
      payment_id: payment?.id ?? null,
      payment_amount_in_cents: payment?.amountInCents ?? null,
      memo,
      gateway_used: manual ? null : gatewayName,
      gateway_transaction_id: refund?.gatewayTransactionId ?? null,
      gateway_order_id: null,
      masked_card_number: profile ? `XXXX-XXXX-XXXX-${profile.lastFour}` : null,
      customer_id: subscription.customerId,
      customer_first_name: customer?.firstName ?? null,
      customer_last_name: customer?.lastName ?? null,
      customer_email: customer?.email ?? null,
      customer_organization: customer?.organization ?? null,
      customer_reference: customer?.reference ?? null,
      timestamp: ctx.now.toISOString(),
      ...(errors === undefined ? {} : { errors: [...errors] }),
    },
  });
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const LEDGER_METHODS = [
  'charge',
  'adjust',
  'credit',
  'recordExternalPayment',
  'refund',
  'transactions',
] as const;
