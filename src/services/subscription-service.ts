import { randomUUID } from 'node:crypto';
import { balanceDelta } from '../domain/ledger/balance-delta.js';
import { addInterval, parseInstant } from '../domain/time/index.js';
import { productInterval } from '../domain/subscription/periods.js';
import { billingPeriod } from '../domain/time/index.js';
import { BillingError, invalid, notFound, ValidationCollector } from '../errors.js';
import type { CardInput, PaymentGateway } from '../ports/gateway.js';
import type {
  CustomerRecord,
  NewTransaction,
  PaymentProfileRecord,
  ProductTerms,
  SiteRecord,
  StorageTransaction,
  SubscriptionRecord,
  SubscriptionState,
  TransactionRecord,
} from '../ports/storage.js';
import { loadProduct, type ProductView } from './catalog-service.js';
import { type CommandContext, type CommandDeps, runCommand } from './command-runner.js';
import { type CustomerInput, insertCustomer, loadCustomer, validateCustomerInput } from './customer-service.js';
import { chargeAttempt } from './payment-runner.js';
import { loadSite } from './site-service.js';

/** A card as `credit_card_attributes` gives it; expiry may be a number or a string. */
export interface CreditCardInput {
  readonly fullNumber: string;
  readonly expirationMonth: number | string;
  readonly expirationYear: number | string;
  readonly cvv?: string;
  readonly firstName?: string;
  readonly lastName?: string;
}

/** Input of {@link SubscriptionService.create}. */
export interface CreateSubscriptionInput {
  readonly productHandle?: string;
  readonly productId?: number;
  /** An existing customer, or `customer` to create one. */
  readonly customerId?: number;
  readonly customer?: CustomerInput;
  readonly creditCard?: CreditCardInput;
  /** In the future: no charge now (imports, custom trials). In the past: billed from then, now. */
  readonly nextBillingAt?: Date | string;
}

/** A subscription as reads return it. */
export interface SubscriptionView {
  readonly subscription: SubscriptionRecord;
  readonly balanceInCents: number;
  readonly product: ProductView;
  readonly customer: CustomerRecord;
  readonly paymentProfile: PaymentProfileRecord | null;
}

/** Dependencies of the subscription service: the command deps plus the gateway. */
export interface SubscriptionDeps extends CommandDeps {
  readonly gateway: PaymentGateway;
}

/** What the signup charges, line by line, before any payment. */
interface SignupPlan {
  readonly site: SiteRecord;
  readonly product: ProductView;
  readonly customer: CustomerRecord | undefined;
  readonly state: SubscriptionState;
  readonly anchor: Date;
  readonly periodIndex: number;
  readonly periodStart: Date;
  readonly periodEnd: Date;
  readonly trialEndsAt: Date | null;
  readonly charges: readonly { kind: string; amountInCents: number; memo: string }[];
  readonly totalInCents: number;
}

/** Subscriptions: signup with payment, reads and the renewal step of due work. */
export class SubscriptionService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /**
   * Creates a subscription in one command. The signup charge is paid before anything is created:
   * the payment attempt is committed first, the gateway is called outside any transaction, and the
   * customer, profile, subscription and ledger are written only when the payment succeeded. A
   * declined card creates nothing but the attempt and a `signup_failure` event.
   */
  async create(subdomain: string, input: CreateSubscriptionInput): Promise<SubscriptionView> {
    const card = input.creditCard === undefined ? undefined : parseCard(input.creditCard);
    const plan = await this.#deps.storage.transaction((tx) => this.#plan(tx, subdomain, input, card !== undefined));
    const tokenized = card === undefined ? undefined : await this.#deps.gateway.tokenize(card);
    if (tokenized && !tokenized.ok) throw invalid(tokenized.message, 'credit_card.full_number');
    const vault = tokenized?.ok ? { vaultToken: tokenized.vaultToken, customerVaultToken: tokenized.customerVaultToken } : undefined;

    let attempt: import('../ports/storage.js').PaymentAttemptRecord | undefined;
    if (plan.totalInCents > 0) {
      attempt = await runCommand(this.#deps, ({ tx, now }) =>
        tx.payments.insert({
          siteId: plan.site.id,
          subscriptionId: null,
          customerId: plan.customer?.id ?? null,
          idempotencyKey: `signup:${randomUUID()}`,
          amountInCents: plan.totalInCents,
          currency: plan.site.currency,
          purpose: 'signup',
          status: 'pending',
          gatewayTransactionId: null,
          message: null,
          transactionId: null,
          createdAt: now,
          updatedAt: now,
        }),
      );
      const result = await chargeAttempt(this.#deps.gateway, attempt, vault!, `Signup: ${plan.product.version.terms.name}`);
      if (result.outcome !== 'success') {
        const failed = attempt;
        await runCommand(this.#deps, async (ctx) => {
          await ctx.tx.payments.update(plan.site.id, failed.id, {
            status: result.outcome === 'declined' ? 'declined' : result.outcome === 'error' ? 'failed' : 'unknown',
            message: result.message,
            updatedAt: ctx.now,
          });
          ctx.record({
            siteId: plan.site.id,
            key: 'signup_failure',
            subjectType: 'payment_attempt',
            subjectId: failed.id,
            payload: { subscription: { state: 'failed_to_create', product: { handle: plan.product.product.handle } }, message: result.message },
          });
        });
        throw new BillingError(result.outcome === 'declined' ? 'payment_declined' : 'gateway_error', result.message, {
          data: { attemptId: failed.id },
        });
      }
      attempt = { ...attempt, gatewayTransactionId: result.transactionId };
    }

    const paid = attempt;
    const created = await runCommand(this.#deps, async (ctx) => {
      const customer = plan.customer ?? (await insertCustomer(ctx, plan.site.id, input.customer ?? {}));
      const profile =
        tokenized?.ok && card
          ? await ctx.tx.customers.insertPaymentProfile({
              siteId: plan.site.id,
              customerId: customer.id,
              paymentType: 'credit_card',
              vaultToken: tokenized.vaultToken,
              customerVaultToken: tokenized.customerVaultToken,
              currentVault: this.#deps.gateway.name,
              cardType: tokenized.cardType,
              lastFour: tokenized.lastFour,
              expirationMonth: card.expirationMonth,
              expirationYear: card.expirationYear,
              firstName: card.firstName ?? customer.firstName,
              lastName: card.lastName ?? customer.lastName,
              billingAddress: customer.address,
              createdAt: ctx.now,
              updatedAt: ctx.now,
            })
          : null;
      const subscription = await ctx.tx.subscriptions.insert({
        siteId: plan.site.id,
        customerId: customer.id,
        productId: plan.product.product.id,
        productVersion: plan.product.version.version,
        paymentProfileId: profile?.id ?? null,
        state: plan.state,
        periodAnchorAt: plan.anchor,
        periodIndex: plan.periodIndex,
        currentPeriodStartedAt: plan.periodStart,
        currentPeriodEndsAt: plan.periodEnd,
        nextAssessmentAt: plan.periodEnd,
        trialStartedAt: plan.trialEndsAt ? ctx.now : null,
        trialEndedAt: plan.trialEndsAt,
        activatedAt: plan.state === 'active' ? ctx.now : null,
        canceledAt: null,
        expiresAt: null,
        delayedCancelAt: null,
        cancelAtEndOfPeriod: false,
        cancellationMessage: null,
        cancellationMethod: null,
        signupPaymentId: null,
        signupRevenueInCents: plan.totalInCents,
        couponCodes: [],
        referralCode: null,
        data: {},
        createdAt: ctx.now,
        updatedAt: ctx.now,
      });
      const lines = plan.charges.map((c) =>
        line(subscription, 'charge', c.kind, c.amountInCents, c.memo, ctx.now, { periodIndex: plan.periodIndex }),
      );
      if (paid) {
        lines.push(
          line(subscription, 'payment', null, paid.amountInCents, `Payment for: ${plan.product.version.terms.name}`, ctx.now, {
            success: true,
            gatewayTransactionId: paid.gatewayTransactionId,
          }),
        );
      }
      const written = await ctx.tx.ledger.append(lines);
      const payment = paid ? written.at(-1)! : undefined;
      if (paid && payment) {
        await ctx.tx.payments.update(plan.site.id, paid.id, {
          status: 'succeeded',
          gatewayTransactionId: paid.gatewayTransactionId,
          transactionId: payment.id,
          updatedAt: ctx.now,
        });
      }
      const stored = await ctx.tx.subscriptions.updateAtVersion(plan.site.id, subscription.id, subscription.version, {
        signupPaymentId: payment?.id ?? null,
      });
      await scheduleRenewal(ctx, stored!);
      ctx.record({ siteId: plan.site.id, key: 'signup_success', subjectType: 'subscription', subjectId: subscription.id, payload: { subscription: { id: subscription.id, state: plan.state } } });
      if (payment) recordPayment(ctx, stored!, payment, true);
      return stored!.id;
    });
    return this.get(subdomain, created);
  }

  /** A subscription with its balance, product version, customer and payment profile. */
  get(subdomain: string, id: number): Promise<SubscriptionView> {
    return this.#deps.storage.transaction(async (tx) => loadView(tx, (await loadSite(tx, subdomain)).id, id));
  }

  /** The subscription's ledger lines, oldest first. */
  transactions(subdomain: string, id: number): Promise<TransactionRecord[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      await loadSubscription(tx, site.id, id);
      return tx.ledger.listForSubscription(site.id, id);
    });
  }

  async #plan(tx: StorageTransaction, subdomain: string, input: CreateSubscriptionInput, hasCard: boolean): Promise<SignupPlan> {
    const site = await loadSite(tx, subdomain);
    const errors = new ValidationCollector();
    let product: ProductView | undefined;
    if (input.productId !== undefined) {
      const found = await tx.catalog.findProduct(site.id, input.productId);
      if (found) product = await loadProduct(tx, site.id, found.id);
      else errors.add(`Product with id '${input.productId}' does not exist for this site.`, 'product_id');
    } else if (typeof input.productHandle === 'string' && input.productHandle !== '') {
      const found = await tx.catalog.findProductByHandle(site.id, input.productHandle);
      if (found) product = await loadProduct(tx, site.id, found.id);
      else errors.add(`Product with API Handle '${input.productHandle}' does not exist for this site.`, 'product_handle');
    } else {
      errors.add('Product: must be specified.', 'product_handle');
    }
    if (product?.product.archivedAt) errors.add('Product: has been archived and cannot be subscribed to.', 'product_handle');
    let customer: CustomerRecord | undefined;
    if (input.customerId !== undefined) {
      customer = await tx.customers.findById(site.id, input.customerId);
      if (!customer) errors.add(`Customer with id '${input.customerId}' does not exist for this site.`, 'customer_id');
    } else if (input.customer === undefined) {
      errors.add('A Customer must be specified for the subscription to be valid.', 'customer');
    } else {
      validateCustomerInput(input.customer, errors);
      if (input.customer.reference && (await tx.customers.findByReference(site.id, input.customer.reference))) {
        errors.add('Reference: must be unique - that value has been taken.', 'customer.reference');
      }
    }
    const now = this.#deps.clock.now();
    const nextBillingAt =
      input.nextBillingAt === undefined ? undefined : errors.capture(() => parseInstant(input.nextBillingAt, site.timeZone, 'Next billing at'));
    errors.throwIfAny();
    const terms = product!.version.terms;
    const interval = productInterval(terms);
    const charges: { kind: string; amountInCents: number; memo: string }[] = [];
    let state: SubscriptionState = 'active';
    let anchor: Date;
    let periodIndex = 0;
    let periodStart: Date;
    let periodEnd: Date;
    let trialEndsAt: Date | null = null;
    if (nextBillingAt !== undefined && nextBillingAt.getTime() > now.getTime()) {
      // An import or custom trial: nothing is charged until the given instant.
      anchor = nextBillingAt;
      periodIndex = -1;
      periodStart = now;
      periodEnd = nextBillingAt;
    } else if (terms.trialInterval !== null && nextBillingAt === undefined) {
      state = 'trialing';
      trialEndsAt = addInterval(now, { count: terms.trialInterval, unit: terms.trialIntervalUnit ?? 'month' }, 1, site.timeZone);
      anchor = trialEndsAt;
      periodIndex = -1;
      periodStart = now;
      periodEnd = trialEndsAt;
      if ((terms.trialPriceInCents ?? 0) > 0) charges.push({ kind: 'trial', amountInCents: terms.trialPriceInCents!, memo: `${terms.name} trial` });
      if ((terms.initialChargeInCents ?? 0) > 0 && !terms.initialChargeAfterTrial) charges.push(setupFee(terms));
    } else {
      anchor = nextBillingAt ?? now;
      const period = billingPeriod(anchor, 0, interval, site.timeZone);
      periodStart = period.start;
      periodEnd = period.end;
      charges.push({ kind: 'baseline', amountInCents: terms.priceInCents, memo: `${terms.name} (${describePeriod(period.start, period.end)})` });
      if ((terms.initialChargeInCents ?? 0) > 0) charges.push(setupFee(terms));
    }
    const totalInCents = charges.reduce((sum, c) => sum + c.amountInCents, 0);
    if (totalInCents > 0 && !hasCard) throw invalid('A payment method is required: the signup charge cannot be collected without a card.', 'credit_card');
    if (totalInCents === 0 && !hasCard && terms.requireCreditCard && terms.priceInCents > 0) {
      throw invalid('Credit card: is required for this product.', 'credit_card');
    }
    return { site, product: product!, customer, state, anchor, periodIndex, periodStart, periodEnd, trialEndsAt, charges, totalInCents };
  }
}

function setupFee(terms: ProductTerms) {
  return { kind: 'initial', amountInCents: terms.initialChargeInCents!, memo: `${terms.name} setup fee` };
}

function describePeriod(start: Date, end: Date): string {
  return `${start.toISOString().slice(0, 10)} - ${end.toISOString().slice(0, 10)}`;
}

/** A ledger line for a subscription; the balance delta follows from the type. */
export function line(
  subscription: SubscriptionRecord,
  type: NewTransaction['type'],
  kind: string | null,
  amountInCents: number,
  memo: string,
  at: Date,
  extra: Partial<Pick<NewTransaction, 'success' | 'gatewayTransactionId' | 'periodIndex' | 'paymentId'>> = {},
): NewTransaction {
  return {
    siteId: subscription.siteId,
    subscriptionId: subscription.id,
    customerId: subscription.customerId,
    type,
    kind,
    amountInCents,
    memo,
    success: extra.success ?? null,
    paymentId: extra.paymentId ?? null,
    productId: subscription.productId,
    componentId: null,
    periodIndex: extra.periodIndex ?? null,
    gatewayTransactionId: extra.gatewayTransactionId ?? null,
    createdAt: at,
    balanceDeltaInCents: balanceDelta(type, amountInCents),
  };
}

/** Schedules the renewal at the end of the subscription's current period (once per period). */
export async function scheduleRenewal(ctx: CommandContext, subscription: SubscriptionRecord): Promise<void> {
  const next = subscription.periodIndex + 1;
  await ctx.tx.dueWork.schedule({
    siteId: subscription.siteId,
    kind: 'renewal',
    subjectId: subscription.id,
    dueAt: subscription.currentPeriodEndsAt,
    uniqueKey: `renewal:${subscription.id}:${next}`,
    payload: { periodIndex: next },
  });
}

/** Records `payment_success` or `payment_failure` for a ledger payment. */
export function recordPayment(ctx: CommandContext, subscription: SubscriptionRecord, payment: TransactionRecord, success: boolean): void {
  ctx.record({
    siteId: subscription.siteId,
    key: success ? 'payment_success' : 'payment_failure',
    subjectType: 'subscription',
    subjectId: subscription.id,
    payload: { subscription: { id: subscription.id, state: subscription.state }, transaction: { id: payment.id, amount_in_cents: payment.amountInCents } },
  });
}

/** A subscription inside a transaction; `not_found` when missing. */
export async function loadSubscription(tx: StorageTransaction, siteId: number, id: number): Promise<SubscriptionRecord> {
  const subscription = await tx.subscriptions.findById(siteId, id);
  if (!subscription) throw notFound('Subscription', id);
  return subscription;
}

/** The read view of a subscription. */
export async function loadView(tx: StorageTransaction, siteId: number, id: number): Promise<SubscriptionView> {
  const subscription = await loadSubscription(tx, siteId, id);
  const version = await tx.catalog.findProductVersion(siteId, subscription.productId, subscription.productVersion);
  const product = await tx.catalog.findProduct(siteId, subscription.productId);
  if (!version || !product) throw new BillingError('storage', `Subscription ${id} refers to a missing product version.`);
  return {
    subscription,
    balanceInCents: await tx.ledger.balance(siteId, id),
    product: { product, version },
    customer: await loadCustomer(tx, siteId, subscription.customerId),
    paymentProfile: subscription.paymentProfileId === null ? null : ((await tx.customers.findPaymentProfile(siteId, subscription.paymentProfileId)) ?? null),
  };
}

function parseCard(input: CreditCardInput): CardInput {
  const errors = new ValidationCollector();
  const number = typeof input.fullNumber === 'string' ? input.fullNumber.replace(/[\s-]/g, '') : '';
  if (number === '') errors.add('Credit card number: cannot be blank.', 'credit_card.full_number');
  else if (!/^\d+$/.test(number)) errors.add('Credit card number: must contain only digits.', 'credit_card.full_number');
  const month = Number(typeof input.expirationMonth === 'string' ? input.expirationMonth.trim() : input.expirationMonth);
  const year = Number(typeof input.expirationYear === 'string' ? input.expirationYear.trim() : input.expirationYear);
  if (input.expirationMonth === undefined || input.expirationMonth === '') errors.add('Credit card expiration month: cannot be blank.', 'credit_card.expiration_month');
  else if (!Number.isInteger(month) || month < 1 || month > 12) errors.add('Credit card expiration month: must be a number from 1 to 12.', 'credit_card.expiration_month');
  if (input.expirationYear === undefined || input.expirationYear === '') errors.add('Credit card expiration year: cannot be blank.', 'credit_card.expiration_year');
  else if (!Number.isInteger(year) || year < 2000 || year > 2200) errors.add('Credit card expiration year: must be a four-digit year.', 'credit_card.expiration_year');
  errors.throwIfAny();
  return {
    fullNumber: number,
    expirationMonth: month,
    expirationYear: year,
    ...(input.cvv === undefined ? {} : { cvv: input.cvv }),
    ...(input.firstName === undefined ? {} : { firstName: input.firstName }),
    ...(input.lastName === undefined ? {} : { lastName: input.lastName }),
  };
}
