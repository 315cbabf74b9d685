import { parseMajorAmount, parseMinorAmount } from '../domain/money/index.js';
import { endOfLocalDay, parseLocalDate } from '../domain/time/index.js';
import { invalid, notFound, ValidationCollector } from '../errors.js';
import type {
  AccountEntryRecord,
  AccountEntryType,
  SiteRecord,
  SubscriptionRecord,
  SubscriptionState,
} from '../ports/storage.js';
import { type AccountState, prepaymentTotal, replayAccounts } from './account-replay.js';
import { type CommandContext, runCommand } from './command-runner.js';
import { optionalMemo, positiveInteger } from './input-fields.js';
import { settleIfPaid } from './lifecycle-service.js';
import { post } from './posting.js';
import { runRead } from './read-runner.js';
import { loadSite } from './site-lookup.js';
import { line, loadSubscription, type SubscriptionDeps } from './subscription-service.js';
import { claimUniquenessToken } from './uniqueness.js';

/** Payment types a prepayment received outside the gateway may have (the service's list). */
export const PREPAYMENT_METHODS = ['check', 'cash', 'money_order', 'ach', 'paypal_account', 'credit_card', 'other'];

/** Input of {@link AccountService.createPrepayment}: `amount` in major units (or `amountInCents`). */
export interface PrepaymentInput {
  readonly amount?: string | number | null;
  readonly amountInCents?: string | number | null;
  /** Required. */
  readonly memo?: string | null;
  /** Required: what identifies the payment (a check number, a wire reference). */
  readonly details?: string | null;
  /** Required: one of {@link PREPAYMENT_METHODS}. */
  readonly method?: string | null;
  /** Duplicate prevention. */
  readonly uniquenessToken?: string | null;
}

/** Input of {@link AccountService.refundPrepayment}. */
export interface PrepaymentRefundInput {
  readonly amount?: string | number | null;
  readonly amountInCents?: string | number | null;
  /** Required. */
  readonly memo?: string | null;
  /** The money goes back outside the gateway; prepayments are external, so only true (or absent) is accepted. */
  readonly external?: boolean | null;
  readonly uniquenessToken?: string | null;
}

/** Input of {@link AccountService.issueServiceCredit} and {@link AccountService.deductServiceCredit}. */
export interface ServiceCreditInput {
  readonly amount?: string | number | null;
  readonly amountInCents?: string | number | null;
  /** Optional. */
  readonly memo?: string | null;
  readonly uniquenessToken?: string | null;
}

/** Input of {@link AccountService.listPrepayments}. */
export interface PrepaymentListInput {
  readonly page?: number | string;
  readonly perPage?: number | string;
  /** `created_at` (the only date a prepayment has here). */
  readonly dateField?: string;
  /** `YYYY-MM-DD` in the site's zone, inclusive. */
  readonly startDate?: string;
  /** `YYYY-MM-DD` in the site's zone, inclusive. */
  readonly endDate?: string;
}

/** A prepayment with what remains of it. */
export interface PrepaymentView {
  readonly entry: AccountEntryRecord;
  /** What is still held for future charges: not yet applied to charges, not refunded. */
  readonly remainingInCents: number;
  readonly refundedInCents: number;
}

/** A prepayment just recorded, with the prepayment account's balance before and after. */
export interface CreatedPrepaymentView {
  readonly entry: AccountEntryRecord;
  readonly startingBalanceInCents: number;
  readonly endingBalanceInCents: number;
}

/** A service credit issued or deducted, with the service-credit account's balance after it. */
export interface ServiceCreditView {
  readonly entry: AccountEntryRecord;
  readonly endingBalanceInCents: number;
}

/** A subscription's account balances, in minor units. */
export interface AccountBalancesView {
  /** What the subscription's open invoices still owe. */
  readonly openInvoicesInCents: number;
  /** The engine issues no pending invoices: always 0. */
  readonly pendingInvoicesInCents: number;
  /** The engine keeps no pending-discount account: always 0. */
  readonly pendingDiscountsInCents: number;
  readonly serviceCreditsInCents: number;
  readonly prepaymentsInCents: number;
}

const CLOSED_STATES: readonly SubscriptionState[] = ['cancelled', 'expired'];
const DEFAULT_PER_PAGE = 20;
const MAX_PER_PAGE = 200;

/**
 * A subscription's account: prepayments (money received outside the gateway and held for future
 * charges), service credits (credit granted, issued and deducted), and the balances of both with
 * its open invoices. Every movement posts its ledger line through `post()` in the command's
 * transaction, so the ledger balance, the invoices and the accounts never disagree; renewals use
 * the credit exactly as they use any negative balance.
 */
export class AccountService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /** The storage, clock and gateway the commands run on. */
  protected get deps(): SubscriptionDeps {
    return this.#deps;
  }

  /** The subscription's open invoices, service-credit and prepayment balances. */
  balances(subdomain: string, subscriptionId: number): Promise<AccountBalancesView> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      await loadSubscription(tx, site.id, subscriptionId);
      const state = replayAccounts(
        await tx.ledger.listForSubscription(site.id, subscriptionId),
        await tx.accounts.listForSubscription(site.id, subscriptionId),
      );
      const open = await tx.invoices.listForSubscription(site.id, subscriptionId, 'open');
      return {
        openInvoicesInCents: open.reduce((sum, i) => sum + i.dueInCents, 0),
        pendingInvoicesInCents: 0,
        pendingDiscountsInCents: 0,
        serviceCreditsInCents: state.serviceCreditInCents,
        prepaymentsInCents: prepaymentTotal(state),
      };
    });
  }

  /**
   * Records a prepayment received outside the gateway (check, cash, wire...): a `payment` line of
   * kind `prepayment`. Like any payment it first pays the subscription's open invoices (oldest
   * first); the rest is held on the prepayment account for future charges. `credit_card_on_file`
   * (collecting the prepayment from the card) is refused: only external prepayments are recorded.
   */
  createPrepayment(subdomain: string, subscriptionId: number, input: PrepaymentInput): Promise<CreatedPrepaymentView> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await claimUniquenessToken(ctx, site.id, input.uniquenessToken);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const errors = new ValidationCollector();
      const amount = readPositiveAmount(input, site, errors);
      const memo = requiredText(input.memo, 'Memo', 'memo', errors);
      const details = requiredText(input.details, 'Details', 'details', errors);
      const method = input.method;
      if (method === 'credit_card_on_file') {
        errors.add(
          'Method: credit_card_on_file is not supported; record a prepayment received outside the gateway.',
          'method',
        );
      } else if (typeof method !== 'string' || !PREPAYMENT_METHODS.includes(method)) {
        errors.add('Method: is not included in the list.', 'method');
      }
      if (CLOSED_STATES.includes(subscription.state))
        errors.add('This subscription is not eligible to accept prepayments.');
      errors.throwIfAny();
      const before = await this.#state(ctx, site.id, subscription.id);
      const [written] = await post(ctx.tx, [
        line(subscription, 'payment', 'prepayment', amount!, memo!, ctx.now, { success: true }),
      ]);
      const entry = await ctx.tx.accounts.insert({
        siteId: site.id,
        subscriptionId: subscription.id,
        account: 'prepayment',
        entryType: 'prepayment',
        amountInCents: amount!,
        memo: memo!,
        details: details!,
        method: method!,
        external: true,
        prepaymentId: null,
        transactionId: written!.id,
        createdAt: ctx.now,
      });
      await settleIfPaid(ctx, site.id, subscription.id);
      const after = await this.#state(ctx, site.id, subscription.id);
      return {
        entry,
        startingBalanceInCents: prepaymentTotal(before),
        endingBalanceInCents: prepaymentTotal(after),
      };
    });
  }

  /** One page of the subscription's prepayments, oldest first, with what remains of each. */
  listPrepayments(
    subdomain: string,
    subscriptionId: number,
    input: PrepaymentListInput = {},
  ): Promise<PrepaymentView[]> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      await loadSubscription(tx, site.id, subscriptionId);
      const errors = new ValidationCollector();
      const page = positiveInteger(input.page, 1, 'Page', errors);
      const perPage = Math.min(MAX_PER_PAGE, positiveInteger(input.perPage, DEFAULT_PER_PAGE, 'Per page', errors));
      if (input.dateField !== undefined && input.dateField !== 'created_at') {
        errors.add('Date field: must be created_at.', 'date_field');
      }
      const since =
        input.startDate === undefined
          ? undefined
          : errors.capture(() => parseLocalDate(input.startDate, site.timeZone, 'Start date'));
      const untilDay =
        input.endDate === undefined
          ? undefined
          : errors.capture(() => parseLocalDate(input.endDate, site.timeZone, 'End date'));
      errors.throwIfAny();
      const entries = await tx.accounts.list(
        site.id,
        {
          subscriptionId,
          entryTypes: ['prepayment'],
          ...(since === undefined ? {} : { since }),
          ...(untilDay === undefined ? {} : { until: endOfLocalDay(untilDay, site.timeZone) }),
        },
        { page, perPage },
      );
      if (entries.length === 0) return [];
      const state = replayAccounts(
        await tx.ledger.listForSubscription(site.id, subscriptionId),
        await tx.accounts.listForSubscription(site.id, subscriptionId),
      );
      return entries.map((entry) => prepaymentView(entry, state));
    });
  }

  /**
   * Refunds (part of) a prepayment outside the gateway: never more than what remains of it (the
   * part not yet used by charges nor refunded). Posts an `adjustment` of kind `prepayment_refund`
   * that takes the money off the subscription's credit, and a `refund` line (balance unchanged)
   * recording the money returned; no credit note, as no invoice is refunded. Without an amount the
   * whole remainder is refunded.
   */
  refundPrepayment(
    subdomain: string,
    subscriptionId: number,
    prepaymentId: number,
    input: PrepaymentRefundInput,
  ): Promise<PrepaymentView> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await claimUniquenessToken(ctx, site.id, input.uniquenessToken);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const prepayment = await ctx.tx.accounts.findById(site.id, prepaymentId);
      if (prepayment?.subscriptionId !== subscription.id || prepayment.entryType !== 'prepayment') {
        throw notFound('Prepayment', prepaymentId);
      }
      const errors = new ValidationCollector();
      const hasAmount = present(input.amount) || present(input.amountInCents);
      const amount = hasAmount ? readPositiveAmount(input, site, errors) : undefined;
      const memo = requiredText(input.memo, 'Memo', 'memo', errors);
      if (input.external === false) {
        errors.add('External: a prepayment received outside the gateway is refunded outside it.', 'external');
      }
      errors.throwIfAny();
      const before = await this.#state(ctx, site.id, subscription.id);
      const remaining = before.prepayments.get(prepayment.id)?.remainingInCents ?? 0;
      const refund = amount ?? remaining;
      if (refund <= 0) throw invalid('Prepayment: has no remaining amount to refund.', 'amount');
      if (refund > remaining) throw invalid(OVER_REFUND, 'amount');
      const [adjustment] = await post(ctx.tx, [
        line(subscription, 'adjustment', 'prepayment_refund', refund, memo!, ctx.now),
        line(subscription, 'refund', 'prepayment_refund', refund, memo!, ctx.now, { success: true }),
      ]);
      const entry = await ctx.tx.accounts.insert({
        siteId: site.id,
        subscriptionId: subscription.id,
        account: 'prepayment',
        entryType: 'prepayment_refund',
        amountInCents: refund,
        memo: memo!,
        details: null,
        method: null,
        external: true,
        prepaymentId: prepayment.id,
        transactionId: adjustment!.id,
        createdAt: ctx.now,
      });
      // Checked again once the ledger append holds the subscription's row lock: a concurrent
      // refund or renewal committed before it is now in the replay, so two refunds can never
      // return more than the prepayment held.
      const after = await this.#state(ctx, site.id, subscription.id);
      if (after.overdrawn.has(entry.id)) throw invalid(OVER_REFUND, 'amount');
      return prepaymentView(prepayment, after);
    });
  }

  /**
   * Issues a service credit: a `credit` line of kind `service_credit`, not billed on an invoice,
   * that the subscription's next charges use (and, as any credit, what its open invoices owe).
   */
  issueServiceCredit(subdomain: string, subscriptionId: number, input: ServiceCreditInput): Promise<ServiceCreditView> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await claimUniquenessToken(ctx, site.id, input.uniquenessToken);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const errors = new ValidationCollector();
      const amount = readPositiveAmount(input, site, errors);
      const memo = optionalMemo(input.memo, errors);
      if (CLOSED_STATES.includes(subscription.state))
        errors.add('This subscription is not eligible to accept credits.');
      errors.throwIfAny();
      const [written] = await post(ctx.tx, [line(subscription, 'credit', 'service_credit', -amount!, memo, ctx.now)], {
        invoice: false,
      });
      const entry = await this.#insertCreditEntry(ctx, subscription, 'credit', amount!, memo, written!.id);
      await settleIfPaid(ctx, site.id, subscription.id);
      const after = await this.#state(ctx, site.id, subscription.id);
      return { entry, endingBalanceInCents: after.serviceCreditInCents };
    });
  }

  /**
   * Deducts from the service-credit account, never below zero: an `adjustment` of kind
   * `service_credit_deduction` that gives the credit back to the balance.
   */
  deductServiceCredit(
    subdomain: string,
    subscriptionId: number,
    input: ServiceCreditInput,
  ): Promise<ServiceCreditView> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await claimUniquenessToken(ctx, site.id, input.uniquenessToken);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const errors = new ValidationCollector();
      const amount = readPositiveAmount(input, site, errors);
      const memo = optionalMemo(input.memo, errors);
      errors.throwIfAny();
      const before = await this.#state(ctx, site.id, subscription.id);
      if (amount! > before.serviceCreditInCents) throw invalid(OVER_DEDUCTION, 'amount');
      const [written] = await post(ctx.tx, [
        line(subscription, 'adjustment', 'service_credit_deduction', amount!, memo, ctx.now),
      ]);
      const entry = await this.#insertCreditEntry(ctx, subscription, 'debit', amount!, memo, written!.id);
      // Checked again under the row lock the append took (see refundPrepayment).
      const after = await this.#state(ctx, site.id, subscription.id);
      if (after.overdrawn.has(entry.id)) throw invalid(OVER_DEDUCTION, 'amount');
      return { entry, endingBalanceInCents: after.serviceCreditInCents };
    });
  }

  async #state(ctx: CommandContext, siteId: number, subscriptionId: number): Promise<AccountState> {
    return replayAccounts(
      await ctx.tx.ledger.listForSubscription(siteId, subscriptionId),
      await ctx.tx.accounts.listForSubscription(siteId, subscriptionId),
    );
  }

  #insertCreditEntry(
    ctx: CommandContext,
    subscription: SubscriptionRecord,
    entryType: Extract<AccountEntryType, 'credit' | 'debit'>,
    amountInCents: number,
    memo: string,
    transactionId: number,
  ): Promise<AccountEntryRecord> {
    return ctx.tx.accounts.insert({
      siteId: subscription.siteId,
      subscriptionId: subscription.id,
      account: 'service_credit',
      entryType,
      amountInCents,
      memo,
      details: null,
      method: null,
      external: true,
      prepaymentId: null,
      transactionId,
      createdAt: ctx.now,
    });
  }
}

const OVER_REFUND = 'Amount: cannot exceed the remaining amount of the prepayment.';
const OVER_DEDUCTION = 'Amount: cannot exceed the service credit balance.';

function prepaymentView(entry: AccountEntryRecord, state: AccountState): PrepaymentView {
  const bucket = state.prepayments.get(entry.id);
  return { entry, remainingInCents: bucket?.remainingInCents ?? 0, refundedInCents: bucket?.refundedInCents ?? 0 };
}

function present<T>(value: T | null | undefined): value is T {
  return value !== undefined && value !== null;
}

/** `amountInCents` when given, else `amount` in major units; must be greater than 0. */
function readPositiveAmount(
  input: { readonly amount?: unknown; readonly amountInCents?: unknown },
  site: SiteRecord,
  errors: ValidationCollector,
): number | undefined {
  const amount = present(input.amountInCents)
    ? errors.capture(() => parseMinorAmount(input.amountInCents, { field: 'Amount', attribute: 'amount_in_cents' }))
    : errors.capture(() => parseMajorAmount(input.amount, site.currency, { field: 'Amount', attribute: 'amount' }));
  if (amount === 0) errors.add('Amount: must be greater than 0.', 'amount');
  return amount === 0 ? undefined : amount;
}

function requiredText(value: unknown, label: string, attribute: string, errors: ValidationCollector) {
  if (typeof value !== 'string' || value.trim() === '') {
    errors.add(`${label}: cannot be blank.`, attribute);
    return undefined;
  }
  return value.trim();
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const ACCOUNT_METHODS = [
  'balances',
  'createPrepayment',
  'listPrepayments',
  'refundPrepayment',
  'issueServiceCredit',
  'deductServiceCredit',
] as const;
