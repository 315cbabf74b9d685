import { randomBytes, randomUUID } from 'node:crypto';
import { computeDiscount, stackingErrors } from '../domain/catalog/coupon-discount.js';
import { balanceDelta } from '../domain/ledger/balance-delta.js';
import { prorate } from '../domain/money/index.js';
import { productInterval } from '../domain/subscription/periods.js';
import {
  addInterval,
  assertSnapDay,
  billingPeriod,
  endOfLocalDay,
  firstSnapPeriodEnd,
  parseInstant,
  parseLocalDate,
  type SnapDay,
  snapBoundary,
} from '../domain/time/index.js';
import { BillingError, invalid, isBillingError, notFound, ValidationCollector, validationError } from '../errors.js';
import type { CardInput, PaymentGateway, TokenizeResult } from '../ports/gateway.js';
import type {
  AddressFields,
  CouponRecord,
  CustomerRecord,
  NewSubscription,
  NewTransaction,
  PaymentCollectionMethod,
  PaymentProfileRecord,
  ProductTerms,
  SiteRecord,
  StorageTransaction,
  SubscriptionDateField,
  SubscriptionFilter,
  SubscriptionRecord,
  SubscriptionState,
  TransactionRecord,
} from '../ports/storage.js';
import { prepaymentBalance } from './account-replay.js';
import { loadProduct, type ProductView, withPricePoints } from './catalog-service.js';
import { type CommandContext, type CommandDeps, runCommand } from './command-runner.js';
import {
  type PlannedComponent,
  planSignupComponents,
  type SignupComponentInput,
  writeSignupComponents,
} from './component-billing.js';
import { couponForSignup } from './coupon-service.js';
import { checkSignupCurrency } from './currency-prices.js';
import {
  assignCustomPricePoint,
  type CustomPricePlan,
  checkCustomPrice,
  plannedCustomView,
  writeCustomPricePoint,
} from './custom-price.js';
import {
  type CustomerInput,
  clampPage,
  insertCustomer,
  loadCustomer,
  validateCustomerInput,
} from './customer-service.js';
import {
  delayedSignupAnchor,
  productExpiry,
  scheduleDelayedSignup,
  scheduleExpiration,
} from './delayed-signup-schedule.js';
import { checkMetadataValues, setMetadataInCommand } from './metafield-service.js';
import { OFFER_ID_DATA_KEY, offerSignup } from './offer-service.js';
import {
  chargeOrLookUp,
  claimOpenCollection,
  customerReferenceCollection,
  pendingAttempt,
  releaseOpenCollection,
  scheduleRefundIfUncommitted,
} from './payment-runner.js';
import { collectableAmount, collectsAutomatically, post, scheduleReplenishmentCheck } from './posting.js';
import {
  insertCardPrepayment,
  PREPAID_CONFIGURATION,
  type PrepaidConfiguration,
  type PrepaidConfigurationInput,
  prepaidConfigurationData,
  readPrepaidConfiguration,
} from './prepaid-configuration.js';
import { type ProductPricePointInput, resolveSignupVersion } from './price-point-service.js';
import { generateReferralCode } from './referral-service.js';
import { scheduleRenewalAt } from './renewal-schedule.js';
import { loadSubscription } from './site-lookup.js';
import { loadSite } from './site-service.js';

// Kept here too: most services load a subscription through this module.
export { loadSubscription };

/** A card as `credit_card_attributes` gives it; expiry may be a number or a string. */
export interface CreditCardInput {
  readonly fullNumber: string;
  readonly expirationMonth: number | string;
  readonly expirationYear: number | string;
  readonly cvv?: string;
  readonly firstName?: string;
  readonly lastName?: string;
}

/** A vault profile imported at signup (the `payment_profile_attributes` import form). */
export interface PaymentProfileImport {
  readonly vaultToken: string;
  readonly customerVaultToken?: string | null;
  /** The vault or gateway the token belongs to; default this engine's gateway. */
  readonly currentVault?: string;
  readonly cardType?: string;
  readonly lastFour?: string;
  readonly expirationMonth: number | string;
  readonly expirationYear: number | string;
  readonly firstName?: string;
  readonly lastName?: string;
}

/** A payment method ready to store: tokenized now, or imported with its vault token. */
export interface StoredMethod {
  readonly vaultToken: string;
  readonly customerVaultToken: string | null;
  readonly currentVault: string;
  readonly cardType: string;
  readonly lastFour: string;
  readonly expirationMonth: number;
  readonly expirationYear: number;
  readonly firstName: string | undefined;
  readonly lastName: string | undefined;
}

/** Input of {@link SubscriptionService.create}. */
export interface CreateSubscriptionInput {
  readonly productHandle?: string;
  readonly productId?: number;
  /** A price point of the product to sign up on (default: the product's default price point). */
  readonly productPricePointId?: number;
  /** A price point of the product by handle. */
  readonly productPricePointHandle?: string;
  /**
   * Terms of the subscription's own instead of a price point (`custom_price`): written as a
   * `custom` price point of the product with the subscription (see `custom-price.ts`).
   */
  readonly customPrice?: ProductPricePointInput;
  /** An existing customer, or `customer` to create one. */
  readonly customerId?: number;
  /** An existing customer by its reference (`customer_reference`), instead of `customerId`. */
  readonly customerReference?: string;
  /**
   * An existing payment profile of the customer to pay with (`payment_profile_id`), instead of a
   * new card. Without a customer given, the subscription goes to the profile's customer.
   */
  readonly paymentProfileId?: number;
  /**
   * A delayed signup (`initial_billing_at`): in the future, the subscription is created
   * `awaiting_signup`, nothing is charged, and at this instant due work starts it (trialing when
   * the product has a trial, else active) with the first charge a signup now would take. Now or
   * in the past: an ordinary signup, charged now.
   */
  readonly initialBillingAt?: Date | string;
  /** When the subscription expires (`expires_at`, in the future): instead of the product's expiration. */
  readonly expiresAt?: Date | string;
  readonly customer?: CustomerInput;
  readonly creditCard?: CreditCardInput;
  /**
   * An existing vault profile to import instead of a card (`payment_profile_attributes`): the
   * card was tokenized elsewhere, so nothing is sent to the gateway to store it.
   */
  readonly paymentProfile?: PaymentProfileImport;
  /** The referral code of the subscription that referred this signup. */
  readonly ref?: string;
  /** The merchant's own id of the subscription; unique per site (blank means none). */
  readonly reference?: string | null;
  /**
   * In the future: no charge now (imports, custom trials). Now or in the past: assessed once, now,
   * with the first period starting now (an import's missed periods are not charged).
   */
  readonly nextBillingAt?: Date | string;
  /**
   * Calendar billing: renew at 12:00 local on this day (1-28, or `end` for the month's last day).
   * Monthly products without trial or expiration only; the first period is prorated.
   */
  readonly snapDay?: number | 'end';
  /** A coupon to add at signup; the discount is planned first and the coupon redeemed atomically. */
  readonly couponCode?: string;
  /** Several coupons (each must be stackable). */
  readonly couponCodes?: readonly string[];
  /** Components at signup: quantity or on/off allocations (charged with the first period), metered balances. */
  readonly components?: readonly SignupComponentInput[];
  /** Values of subscription metafields to set at signup. */
  readonly metafields?: Readonly<Record<string, string>>;
  /**
   * `automatic` (default): the signup charge and every later invoice are charged to the card.
   * `remittance` (or the older `invoice`): invoices are left open for the customer to pay, so no
   * card is needed. See {@link parsePaymentCollectionMethod}. `prepaid`: the card is charged
   * `prepaidConfiguration.initialFundingAmountInCents`, which becomes the prepayment balance the
   * charges are paid from (see `prepaid-service.ts`).
   */
  readonly paymentCollectionMethod?: string;
  /** Required with `prepaid` (and only then): the initial funding and the auto-replenishment terms. */
  readonly prepaidConfiguration?: PrepaidConfigurationInput;
  /**
   * An offer (`offer_id`: its id, or `handle:<handle>`) instead of the product fields: the signup
   * takes its product and price point, components and coupons (see `offerSignup`).
   */
  readonly offerId?: number | string;
  /**
   * The currency to bill in (`currency`, ISO 4217, any letter case): a site has exactly one, so
   * only the site's own is accepted (blank means the site's); any other refuses the signup (422)
   * before anything is written or charged. See `checkSignupCurrency`.
   */
  readonly currency?: string;
}

/**
 * Reads a payment collection method as the service names them: `automatic`, `remittance`, and
 * `invoice`, the older name of remittance. `prepaid` is not read here: a signup reads it with its
 * `prepaid_configuration`, and an existing subscription becomes prepaid through its configuration
 * endpoint (`POST /subscriptions/{id}/prepaid_configurations.json`), so it is refused with that
 * pointer; anything else is not a method.
 */
export function parsePaymentCollectionMethod(
  value: unknown,
  errors: ValidationCollector,
): PaymentCollectionMethod | undefined {
  if (value === 'automatic' || value === 'remittance') return value;
  if (value === 'invoice') return 'remittance';
  errors.add(
    value === 'prepaid'
      ? 'Payment collection method: prepaid is set with POST /subscriptions/{id}/prepaid_configurations.json.'
      : 'Payment collection method: must be one of automatic, remittance or invoice.',
    'payment_collection_method',
  );
  return undefined;
}

/** Input of {@link SubscriptionService.override}: instants as text (ISO 8601) or dates; null or blank clears a date. */
export interface OverrideInput {
  readonly activatedAt?: string | null;
  readonly canceledAt?: string | null;
  readonly cancellationMessage?: string | null;
  readonly expiresAt?: string | null;
  /** Cannot be cleared: a period always has a start. */
  readonly currentPeriodStartsAt?: string | null;
}

/** A subscription as reads return it. */
export interface SubscriptionView {
  readonly subscription: SubscriptionRecord;
  readonly balanceInCents: number;
  /**
   * What its prepayments still hold (`prepayment_balance_in_cents`, as the account balances show
   * it); 0 without prepayments. Every read of the engine sets it; a view made elsewhere may leave
   * it out, and its wire form then leaves the field out too.
   */
  readonly prepaymentBalanceInCents?: number;
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
  /** A custom price to write as the subscription's price point (`product.version` holds its planned terms). */
  readonly customPrice?: CustomPricePlan;
  readonly customer: CustomerRecord | undefined;
  readonly state: SubscriptionState;
  readonly anchor: Date;
  readonly periodIndex: number;
  readonly periodStart: Date;
  readonly periodEnd: Date;
  readonly trialEndsAt: Date | null;
  /** From creation, ignoring any trial (from `initial_billing_at` for a delayed signup), or as given. */
  readonly expiresAt: Date | null;
  /** Whether `expiresAt` was given at signup (it is then enforced at that instant by due work). */
  readonly expiresAtGiven: boolean;
  /** The customer's existing profile named by `payment_profile_id`. */
  readonly paymentProfile: PaymentProfileRecord | undefined;
  readonly snapDay: SnapDay | undefined;
  /** The subscription whose referral code this signup used. */
  readonly referredBy: number | undefined;
  /** The merchant's reference of the new subscription (trimmed), or null. */
  readonly reference: string | null;
  readonly coupons: readonly CouponRecord[];
  readonly componentRows: readonly PlannedComponent[];
  /** The discount line of each coupon applied now (negative adjustments). */
  readonly discounts: readonly { code: string; amountInCents: number; memo: string }[];
  readonly charges: readonly { kind: string; amountInCents: number; memo: string; componentId?: number }[];
  /** What the signup bills (its invoice). */
  readonly totalInCents: number;
  readonly paymentCollectionMethod: PaymentCollectionMethod;
  /** A prepaid signup's configuration (its id is set when the subscription is written). */
  readonly prepaid: PrepaidConfiguration | undefined;
  /** The offer the signup named (`offer_id`), recorded in the subscription's data; null without one. */
  readonly offerId: number | null;
  /** What is charged to the card before anything is written: the total, nothing under remittance, the initial funding when prepaid. */
  readonly chargeNowInCents: number;
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
    if (input.paymentProfileId !== undefined && (input.creditCard !== undefined || input.paymentProfile !== undefined))
      throw invalid(
        'Payment profile id: cannot be given together with credit card attributes or payment profile attributes.',
        'payment_profile_id',
      );
    const card = input.creditCard === undefined ? undefined : parseCard(input.creditCard, this.#deps.gateway);
    const hasMethod = card !== undefined || input.paymentProfile !== undefined || input.paymentProfileId !== undefined;
    const plan = await this.#deps.storage.transaction((tx) => this.#plan(tx, subdomain, input, hasMethod));
    const imported =
      input.paymentProfile === undefined ? undefined : parseImport(input.paymentProfile, this.#deps.gateway);
    if (card && imported)
      throw invalid(
        'Provide either credit card attributes or payment profile attributes, not both.',
        'payment_profile',
      );
    let method: StoredMethod | undefined = imported;
    if (card) {
      const tokenized = await this.#deps.gateway.tokenize(card);
      if (!tokenized.ok) throw invalid(tokenized.message, 'credit_card.full_number');
      method = {
        vaultToken: tokenized.vaultToken,
        customerVaultToken: tokenized.customerVaultToken,
        currentVault: this.#deps.gateway.name,
        cardType: tokenized.cardType,
        lastFour: tokenized.lastFour,
        expirationMonth: card.expirationMonth,
        expirationYear: card.expirationYear,
        firstName: card.firstName,
        lastName: card.lastName,
      };
    }
    // An existing profile (`payment_profile_id`) pays the first charge through the same collection path.
    const payer = method ?? plan.paymentProfile;
    const vault = payer ? { vaultToken: payer.vaultToken, customerVaultToken: payer.customerVaultToken } : undefined;

    // A signup that creates a customer with a reference collects under a claim on that reference,
    // taken with its pending attempt (before the gateway is called) and released where the signup
    // or its failure is written: of concurrent signups for one new reference, one charges and the
    // others are refused before any money moves. A reference that already has a customer is
    // refused by the plan (and again under the claim), as before.
    const claim = plan.customer === undefined ? newReference(input.customer) : undefined;
    const claimSubject = claim === undefined ? undefined : customerReferenceCollection(claim);

    let attempt: import('../ports/storage.js').PaymentAttemptRecord | undefined;
    if (plan.chargeNowInCents > 0) {
      attempt = await runCommand(this.#deps, async ({ tx, now }) => {
        if (claim !== undefined && claimSubject !== undefined) {
          await claimOpenCollection(
            tx,
            plan.site.id,
            claimSubject,
            now,
            'A signup for this customer reference is in progress; nothing was charged. Try again when it has finished.',
          );
          // The claim is free again once a signup for the reference is written, in the transaction
          // that wrote its customer: a signup planned before that must not charge for a taken reference.
          if (await tx.customers.findByReference(plan.site.id, claim)) throw referenceTaken();
        }
        // Checked again here, before any money moves: a signup written since the plan may hold it.
        if (plan.reference !== null && (await tx.subscriptions.findByReference(plan.site.id, plan.reference)))
          throw subscriptionReferenceTaken();
        await redeemCoupons(tx, plan.site.id, plan.coupons, now);
        const pending = await tx.payments.insert(
          pendingAttempt({
            siteId: plan.site.id,
            subscriptionId: null,
            customerId: plan.customer?.id ?? null,
            idempotencyKey: `signup:${randomUUID()}`,
            amountInCents: plan.chargeNowInCents,
            currency: plan.site.currency,
            purpose: 'signup',
            now: now,
          }),
        );
        // If this process dies before the signup is written, or the gateway's answer is lost, the
        // reconciliation finds out by key whether money was taken and gives it back (the customer
        // got no subscription). Writing the signup, or a known failure, cancels it.
        await scheduleRefundIfUncommitted(tx, pending, now, claimSubject);
        return pending;
      });
      const result = await chargeOrLookUp(
        this.#deps.gateway,
        attempt,
        vault!,
        `Signup: ${plan.product.version.terms.name}`,
      );
      if (result.outcome !== 'success') {
        const failed = attempt;
        const outcome = result.outcome;
        await runCommand(this.#deps, async (ctx) => {
          await ctx.tx.payments.update(plan.site.id, failed.id, {
            status: outcome === 'declined' ? 'declined' : outcome === 'error' ? 'failed' : 'unknown',
            message: result.message,
            updatedAt: ctx.now,
          });
          // A still-unknown outcome keeps its reconciliation, which refunds the charge if it was taken.
          if (outcome !== 'unknown') {
            await ctx.tx.dueWork.cancelFor(plan.site.id, failed.id, ['reconcile_payment'], ctx.now);
          }
          for (const coupon of plan.coupons) await ctx.tx.coupons.releaseRedemption(plan.site.id, coupon.id, ctx.now);
          // A known failure took no money: the reference is free for the next signup. An unknown
          // outcome keeps the claim until the reconciliation has settled the money (it releases it).
          if (outcome !== 'unknown' && claimSubject !== undefined)
            await releaseOpenCollection(ctx.tx, plan.site.id, claimSubject);
          ctx.record({
            siteId: plan.site.id,
            key: 'signup_failure',
            subjectType: 'payment_attempt',
            subjectId: failed.id,
            payload: {
              subscription: { state: 'failed_to_create', product: { handle: plan.product.product.handle } },
              message: result.message,
            },
          });
        });
        throw new BillingError(result.outcome === 'declined' ? 'payment_declined' : 'gateway_error', result.message, {
          data: { attemptId: failed.id },
        });
      }
      attempt = { ...attempt, gatewayTransactionId: result.transactionId };
    }

    const paid = attempt;
    // The payment is taken: a collision on a generated referral code must not fail the signup,
    // so the write is retried (as a whole: Postgres aborts a transaction on a unique violation).
    const created = await retryOnConflict(3, () =>
      runCommand(this.#deps, async (ctx) => {
        const customer = plan.customer ?? (await insertCustomer(ctx, plan.site.id, input.customer ?? {}));
        if (paid && claimSubject !== undefined) await releaseOpenCollection(ctx.tx, plan.site.id, claimSubject);
        const profile = method
          ? await ctx.tx.customers.insertPaymentProfile({
              siteId: plan.site.id,
              customerId: customer.id,
              paymentType: 'credit_card',
              vaultToken: method.vaultToken,
              customerVaultToken: method.customerVaultToken,
              currentVault: method.currentVault,
              cardType: method.cardType,
              lastFour: method.lastFour,
              expirationMonth: method.expirationMonth,
              expirationYear: method.expirationYear,
              firstName: method.firstName ?? customer.firstName,
              lastName: method.lastName ?? customer.lastName,
              billingAddress: customer.address,
              createdAt: ctx.now,
              updatedAt: ctx.now,
            })
          : (plan.paymentProfile ?? null);
        // A custom price is written first: the subscription is pinned to its version.
        const custom =
          plan.customPrice === undefined
            ? undefined
            : await writeCustomPricePoint(ctx.tx, plan.product.product, plan.customPrice, null, ctx.now);
        const subscription = await insertSubscription(ctx.tx, {
          siteId: plan.site.id,
          customerId: customer.id,
          productId: plan.product.product.id,
          productVersion: custom?.version.version ?? plan.product.version.version,
          reference: plan.reference,
          paymentProfileId: profile?.id ?? null,
          paymentCollectionMethod: plan.paymentCollectionMethod,
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
          expiresAt: plan.expiresAt,
          delayedCancelAt: null,
          cancelAtEndOfPeriod: false,
          cancellationMessage: null,
          cancellationMethod: null,
          signupPaymentId: null,
          signupRevenueInCents: plan.totalInCents,
          couponCodes: plan.coupons.map((c) => c.code),
          referralCode: plan.site.settings.referralsEnabled ? await freeReferralCode(ctx.tx, plan.site.id) : null,
          data: {
            ...(plan.prepaid === undefined ? {} : { [PREPAID_CONFIGURATION]: prepaidConfigurationData(plan.prepaid) }),
            ...(plan.snapDay === undefined ? {} : { snapDay: plan.snapDay }),
            ...(plan.referredBy === undefined ? {} : { referredBy: plan.referredBy }),
            ...(plan.offerId === null ? {} : { [OFFER_ID_DATA_KEY]: plan.offerId }),
            ...(plan.coupons.length === 0
              ? {}
              : {
                  couponUses: couponUsesAfter({}, plan.discounts),
                  couponDeferred: plan.discounts.length === 0 ? plan.coupons.map((c) => c.code) : [],
                }),
          },
          createdAt: ctx.now,
          updatedAt: ctx.now,
        });
        if (custom) await assignCustomPricePoint(ctx.tx, custom.pricePoint, subscription.id, ctx.now);
        await writeSignupComponents(ctx, subscription, plan.componentRows);
        const lines = plan.charges.map((c) =>
          line(subscription, 'charge', c.kind, c.amountInCents, c.memo, ctx.now, {
            periodIndex: plan.periodIndex,
            componentId: c.componentId ?? null,
          }),
        );
        for (const d of plan.discounts) {
          lines.push(
            line(subscription, 'adjustment', 'coupon', d.amountInCents, d.memo, ctx.now, {
              periodIndex: plan.periodIndex,
            }),
          );
        }
        if (input.metafields && Object.keys(input.metafields).length > 0) {
          const values = Object.entries(input.metafields).map(([name, value]) => ({ name, value }));
          await setMetadataInCommand(ctx, plan.site.id, 'subscription', subscription.id, values);
        }
        if (paid) {
          lines.push(
            line(
              subscription,
              'payment',
              plan.prepaid === undefined ? null : 'prepayment',
              paid.amountInCents,
              plan.prepaid === undefined
                ? `Payment for: ${plan.product.version.terms.name}`
                : `Prepaid subscription initial funding: ${plan.product.version.terms.name}`,
              ctx.now,
              {
                success: true,
                gatewayTransactionId: paid.gatewayTransactionId,
              },
            ),
          );
        }
        const written = await post(ctx.tx, lines);
        const payment = paid ? written.at(-1)! : undefined;
        if (plan.prepaid !== undefined && payment) {
          // The funding is the prepayment the first period (and the later charges) are paid from.
          await insertCardPrepayment(ctx.tx, subscription, payment, payment.memo, 'Initial funding', ctx.now);
          if (plan.prepaid.autoReplenish) await scheduleReplenishmentCheck(ctx.tx, subscription, 'signup', ctx.now);
        }
        if (paid && payment) {
          await ctx.tx.payments.update(plan.site.id, paid.id, {
            status: 'succeeded',
            gatewayTransactionId: paid.gatewayTransactionId,
            transactionId: payment.id,
            updatedAt: ctx.now,
          });
          await ctx.tx.dueWork.cancelFor(plan.site.id, paid.id, ['reconcile_payment'], ctx.now);
        }
        const stored = await ctx.tx.subscriptions.updateAtVersion(plan.site.id, subscription.id, subscription.version, {
          signupPaymentId: payment?.id ?? null,
        });
        // A delayed signup is started by due work at `initial_billing_at`; the others renew.
        if (plan.state === 'awaiting_signup') await scheduleDelayedSignup(ctx, stored!);
        else await scheduleRenewalAt(ctx, stored!);
        if (plan.expiresAtGiven) await scheduleExpiration(ctx, stored!);
        ctx.record({
          siteId: plan.site.id,
          key: 'signup_success',
          subjectType: 'subscription',
          subjectId: subscription.id,
          payload: { subscription: { id: subscription.id, state: plan.state } },
        });
        if (payment) recordPayment(ctx, stored!, payment, true);
        return stored!.id;
      }),
    );
    return this.get(subdomain, created);
  }

  /** A subscription with its balance, product version, customer and payment profile. */
  get(subdomain: string, id: number): Promise<SubscriptionView> {
    return this.#deps.storage.transaction(async (tx) => loadView(tx, (await loadSite(tx, subdomain)).id, id), {
      readOnly: true,
    });
  }

  /**
   * Replaces the card of a subscription (`credit_card_attributes`). The whole card is required:
   * a partial update (expiry only) is refused here, as the spec says. The new card is tokenized
   * outside the transaction; `subscription_card_update` is recorded with both masked profiles.
   */
  async updateCard(
    subdomain: string,
    id: number,
    input: CreditCardInput & { billingAddress?: Partial<AddressFields> },
  ): Promise<SubscriptionView> {
    const newCard = await prepareNewCard(this.#deps.gateway, await this.get(subdomain, id), input);
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, id);
      await replaceCardInCommand(ctx, site, subscription, newCard);
      return loadView(ctx.tx, site.id, id);
    });
  }

  /**
   * Updates a payment profile (`payment_profile`): a new full number is tokenized and replaces the
   * card; expiry, names and billing address may change alone. When a subscriber using it is
   * taxed, a complete billing address is required.
   */
  async updatePaymentProfile(
    subdomain: string,
    profileId: number,
    input: Partial<CreditCardInput> & { billingAddress?: Partial<AddressFields> },
  ): Promise<PaymentProfileRecord> {
    const existing = await this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const profile = await tx.customers.findPaymentProfile(site.id, profileId);
      if (!profile) throw notFound('Payment profile', profileId);
      const subscriptions = await tx.subscriptions.list(
        site.id,
        { customerId: profile.customerId },
        { page: 1, perPage: 200 },
      );
      let taxed = false;
      for (const sub of subscriptions.filter((x) => x.paymentProfileId === profileId)) {
        taxed ||=
          (await tx.catalog.findProductVersion(site.id, sub.productId, sub.productVersion))?.terms.taxable === true;
      }
      return { site, profile, taxed };
    });
    const card = parseCard(
      {
        fullNumber: input.fullNumber ?? '0',
        expirationMonth: input.expirationMonth ?? existing.profile.expirationMonth,
        expirationYear: input.expirationYear ?? existing.profile.expirationYear,
      },
      this.#deps.gateway,
    );
    const billingAddress = { ...existing.profile.billingAddress, ...input.billingAddress } as AddressFields;
    requireTaxAddress(existing.taxed, billingAddress);
    const tokenized =
      input.fullNumber === undefined
        ? undefined
        : await this.#deps.gateway.tokenize({
            ...card,
            fullNumber: parseCard(input as CreditCardInput, this.#deps.gateway).fullNumber,
            ...sameGatewayCustomer(this.#deps.gateway, existing.profile),
          });
    if (tokenized && !tokenized.ok) throw invalid(tokenized.message, 'payment_profile.full_number');
    return runCommand(this.#deps, async (ctx) => {
      const updated = await ctx.tx.customers.updatePaymentProfile(existing.site.id, profileId, {
        ...(tokenized?.ok
          ? {
              vaultToken: tokenized.vaultToken,
              customerVaultToken: tokenized.customerVaultToken,
              cardType: tokenized.cardType,
              lastFour: tokenized.lastFour,
            }
          : {}),
        expirationMonth: card.expirationMonth,
        expirationYear: card.expirationYear,
        ...(input.firstName === undefined ? {} : { firstName: input.firstName }),
        ...(input.lastName === undefined ? {} : { lastName: input.lastName }),
        billingAddress,
        updatedAt: ctx.now,
      });
      if (!updated) throw notFound('Payment profile', profileId);
      return updated;
    });
  }

  /** One page of subscriptions matching the query. */
  async list(subdomain: string, query: SubscriptionListQuery = {}): Promise<SubscriptionView[]> {
    return this.#deps.storage.transaction(
      async (tx) => {
        const site = await loadSite(tx, subdomain);
        const filter = await listFilter(tx, site, query);
        const page = clampPage(query.page, query.perPage);
        const rows = filter === undefined ? [] : await tx.subscriptions.list(site.id, filter, page);
        return Promise.all(rows.map((row) => loadView(tx, site.id, row.id)));
      },
      { readOnly: true },
    );
  }

  /** The subscription's ledger lines, oldest first. */
  transactions(subdomain: string, id: number): Promise<TransactionRecord[]> {
    return this.#deps.storage.transaction(
      async (tx) => {
        const site = await loadSite(tx, subdomain);
        await loadSubscription(tx, site.id, id);
        return tx.ledger.listForSubscription(site.id, id);
      },
      { readOnly: true },
    );
  }

  /** The subscription with this reference (exact); `not_found` when none has it. */
  lookup(subdomain: string, reference: string): Promise<SubscriptionView> {
    return this.#deps.storage.transaction(
      async (tx) => {
        const site = await loadSite(tx, subdomain);
        const found =
          typeof reference === 'string' && reference.trim() !== ''
            ? await tx.subscriptions.findByReference(site.id, reference.trim())
            : undefined;
        if (!found) throw notFound('Subscription', reference);
        return loadView(tx, site.id, found.id);
      },
      { readOnly: true },
    );
  }

  /**
   * Sets or clears (null or blank) a subscription's reference. A reference another subscription of
   * the site has is refused with the service's 422 and changes nothing.
   */
  setReference(subdomain: string, id: number, reference: string | null): Promise<SubscriptionView> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, id);
      await setReferenceInCommand(ctx, site, subscription, reference);
      return loadView(ctx.tx, site.id, id);
    });
  }

  /**
   * Sets fields the engine usually manages, to align an imported subscription with its history
   * (`PUT /subscriptions/{id}/override.json`): `activatedAt`, `canceledAt`, `cancellationMessage`,
   * `expiresAt`, and `currentPeriodStartsAt` (only while the subscription has never been billed,
   * and only in the past). Nothing is charged, no state changes and the next billing date stays;
   * no event is recorded (the service does not backfill history). Errors use the service's
   * single-error shape (`{"error": ...}`), all problems joined.
   */
  override(subdomain: string, id: number, input: OverrideInput): Promise<SubscriptionView> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, id);
      const errors = new ValidationCollector();
      const date = (value: string | null | undefined, label: string) =>
        value === undefined
          ? undefined
          : value === null || value === ''
            ? null
            : errors.capture(() => parseInstant(value, site.timeZone, label));
      const activatedAt = date(input.activatedAt, 'Activated at');
      const canceledAt = date(input.canceledAt, 'Canceled at');
      const expiresAt = date(input.expiresAt, 'Expires at');
      const periodStart =
        input.currentPeriodStartsAt === undefined || input.currentPeriodStartsAt === null
          ? undefined
          : errors.capture(() => parseInstant(input.currentPeriodStartsAt, site.timeZone, 'Current period starts at'));
      if (periodStart !== undefined) {
        if ((await ctx.tx.ledger.listForSubscription(site.id, id)).length > 0)
          errors.add(
            'Current period starts at: can only be set on a subscription that has not been billed.',
            'current_period_starts_at',
          );
        else if (periodStart.getTime() >= ctx.now.getTime())
          errors.add('Current period starts at: must be before the current date and time.', 'current_period_starts_at');
        else if (periodStart.getTime() >= subscription.currentPeriodEndsAt.getTime())
          errors.add(
            'Current period starts at: must be before the end of the current period.',
            'current_period_starts_at',
          );
      }
      if (input.cancellationMessage != null && typeof input.cancellationMessage !== 'string')
        errors.add('Cancellation message: must be a string.', 'cancellation_message');
      try {
        errors.throwIfAny();
      } catch (error) {
        // The SDK reads this endpoint's 422 as one error (`{"error": ...}`).
        throw error instanceof BillingError ? validationError(error.details, 'single') : error;
      }
      const patch = {
        ...(activatedAt === undefined ? {} : { activatedAt }),
        ...(canceledAt === undefined ? {} : { canceledAt }),
        ...(expiresAt === undefined ? {} : { expiresAt }),
        ...(periodStart === undefined ? {} : { currentPeriodStartedAt: periodStart }),
        ...(input.cancellationMessage === undefined ? {} : { cancellationMessage: input.cancellationMessage }),
      };
      if (Object.keys(patch).length === 0) return loadView(ctx.tx, site.id, id);
      const moved = await ctx.tx.subscriptions.updateAtVersion(site.id, id, subscription.version, {
        ...patch,
        updatedAt: ctx.now,
      });
      if (!moved) throw new BillingError('conflict', 'The subscription was changed by another request; try again.');
      return loadView(ctx.tx, site.id, id);
    });
  }

  async #plan(
    tx: StorageTransaction,
    subdomain: string,
    given: CreateSubscriptionInput,
    hasCard: boolean,
  ): Promise<SignupPlan> {
    const site = await loadSite(tx, subdomain);
    // An offer stands for the product, components and coupons it packages.
    const { input, offerId } = await offerSignup(tx, site.id, given);
    const errors = new ValidationCollector();
    checkSignupCurrency(given.currency, site, errors);
    let product: ProductView | undefined;
    if (input.productId !== undefined) {
      const found = await tx.catalog.findProduct(site.id, input.productId);
      if (found) product = await loadProduct(tx, site.id, found.id);
      else errors.add(`Product with id '${input.productId}' does not exist for this site.`, 'product_id');
    } else if (typeof input.productHandle === 'string' && input.productHandle !== '') {
      const found = await tx.catalog.findProductByHandle(site.id, input.productHandle);
      if (found) product = await loadProduct(tx, site.id, found.id);
      else
        errors.add(`Product with API Handle '${input.productHandle}' does not exist for this site.`, 'product_handle');
    } else {
      errors.add('Product: must be specified.', 'product_handle');
    }
    if (product?.product.archivedAt)
      errors.add('Product: has been archived and cannot be subscribed to.', 'product_handle');
    if (
      product !== undefined &&
      (input.productPricePointId !== undefined || input.productPricePointHandle !== undefined)
    ) {
      // The subscription pins the price point's current version, so it renews at these terms.
      try {
        const version = await resolveSignupVersion(tx, site.id, product.product, {
          pricePointId: input.productPricePointId ?? null,
          pricePointHandle: input.productPricePointHandle ?? null,
        });
        product = await withPricePoints(tx, { product: product.product, version });
      } catch (error) {
        if (!isBillingError(error, 'validation')) throw error;
        for (const detail of error.details) errors.add(detail.message, detail.attribute);
      }
    }
    // `custom_price`: the product billed at terms of this subscription's own.
    let customPrice: CustomPricePlan | undefined;
    if (input.customPrice !== undefined && product !== undefined) {
      if (input.productPricePointId !== undefined || input.productPricePointHandle !== undefined)
        errors.add('Custom price: cannot be given with a product price point.', 'custom_price');
      else customPrice = await checkCustomPrice(tx, product, input.customPrice, errors);
      if (customPrice !== undefined) product = plannedCustomView(product, customPrice, this.#deps.clock.now());
    }
    let customer: CustomerRecord | undefined;
    // `payment_profile_id`: an existing profile, of the customer given (or, with none given, of its own customer).
    let paymentProfile: PaymentProfileRecord | undefined;
    if (input.paymentProfileId !== undefined) {
      paymentProfile = await tx.customers.findPaymentProfile(site.id, input.paymentProfileId);
      if (!paymentProfile)
        errors.add(
          `Payment profile with id '${input.paymentProfileId}' does not exist for this site.`,
          'payment_profile_id',
        );
    }
    if (input.customerId !== undefined) {
      customer = await tx.customers.findById(site.id, input.customerId);
      if (!customer) errors.add(`Customer with id '${input.customerId}' does not exist for this site.`, 'customer_id');
    } else if (typeof input.customerReference === 'string' && input.customerReference.trim() !== '') {
      customer = await tx.customers.findByReference(site.id, input.customerReference.trim());
      if (!customer)
        errors.add(
          `Customer with reference '${input.customerReference.trim()}' does not exist for this site.`,
          'customer_reference',
        );
    } else if (input.customer === undefined && paymentProfile !== undefined) {
      customer = await tx.customers.findById(site.id, paymentProfile.customerId);
    } else if (input.customer === undefined) {
      if (input.paymentProfileId === undefined)
        errors.add('A Customer must be specified for the subscription to be valid.', 'customer');
    } else {
      validateCustomerInput(input.customer, errors);
      const reference = newReference(input.customer);
      if (reference !== undefined && (await tx.customers.findByReference(site.id, reference))) {
        errors.add(REFERENCE_TAKEN, 'customer.reference');
      }
    }
    if (paymentProfile !== undefined && customer === undefined && input.customer !== undefined)
      errors.add(
        'Payment profile id: a new customer has no payment profiles; give credit card attributes instead.',
        'payment_profile_id',
      );
    else if (paymentProfile !== undefined && customer !== undefined && paymentProfile.customerId !== customer.id)
      errors.add('Payment profile id: does not belong to the customer of this subscription.', 'payment_profile_id');
    // Prepaid is the automatic method plus a configuration (see prepaid-configuration.ts).
    const prepaidSignup = input.paymentCollectionMethod === 'prepaid';
    const prepaid = prepaidSignup ? readPrepaidConfiguration(input.prepaidConfiguration, 0, errors) : undefined;
    if (!prepaidSignup && input.prepaidConfiguration !== undefined)
      errors.add(
        'Prepaid configuration: is only accepted with payment collection method prepaid.',
        'prepaid_configuration',
      );
    const paymentCollectionMethod =
      input.paymentCollectionMethod === undefined || prepaidSignup
        ? 'automatic'
        : (parsePaymentCollectionMethod(input.paymentCollectionMethod, errors) ?? 'automatic');
    const reference = checkReference(input.reference, errors);
    if (reference !== null && (await tx.subscriptions.findByReference(site.id, reference)))
      errors.add(REFERENCE_TAKEN, 'subscription.reference');
    const now = this.#deps.clock.now();
    const nextBillingAt =
      input.nextBillingAt === undefined
        ? undefined
        : errors.capture(() => parseInstant(input.nextBillingAt, site.timeZone, 'Next billing at'));
    const initialBillingAt =
      input.initialBillingAt === undefined
        ? undefined
        : instantField(input.initialBillingAt, site.timeZone, 'Initial billing at', 'initial_billing_at', errors);
    // A past or present instant is an ordinary signup, charged now (as `next_billing_at` is).
    const delayed = initialBillingAt !== undefined && initialBillingAt.getTime() > now.getTime();
    if (initialBillingAt !== undefined && input.nextBillingAt !== undefined)
      errors.add('Initial billing at: cannot be combined with next billing at.', 'initial_billing_at');
    const expiresAtGiven =
      input.expiresAt === undefined
        ? undefined
        : instantField(input.expiresAt, site.timeZone, 'Expires at', 'expires_at', errors);
    if (expiresAtGiven !== undefined && expiresAtGiven.getTime() <= now.getTime())
      errors.add('Expires at: must be in the future.', 'expires_at');
    else if (expiresAtGiven !== undefined && delayed && expiresAtGiven.getTime() <= initialBillingAt!.getTime())
      errors.add('Expires at: must be after initial billing at.', 'expires_at');
    const snapDay =
      input.snapDay === undefined
        ? undefined
        : errors.capture(() => {
            assertSnapDay(input.snapDay);
            return input.snapDay as SnapDay;
          });
    if (snapDay !== undefined && product) {
      const t = product.version.terms;
      if (t.interval !== 1 || t.intervalUnit !== 'month')
        errors.add('Snap day: calendar billing needs a product billed every 1 month.', 'snap_day');
      if (t.trialInterval !== null) errors.add('Snap day: calendar billing cannot be used with a trial.', 'snap_day');
      if (t.expirationInterval !== null)
        errors.add('Snap day: calendar billing cannot be used with an expiration.', 'snap_day');
      if (input.nextBillingAt !== undefined)
        errors.add('Snap day: cannot be combined with next billing at.', 'snap_day');
      if (initialBillingAt !== undefined)
        errors.add('Snap day: cannot be combined with initial billing at.', 'snap_day');
    }
    errors.throwIfAny();
    const terms = product!.version.terms;
    const interval = productInterval(terms);
    const charges: { kind: string; amountInCents: number; memo: string; componentId?: number }[] = [];
    // Components are charged for the first period only when the signup charges a period now.
    let componentPeriod: { prorationPeriodStart?: Date; chargeNow: boolean } = { chargeNow: false };
    let state: SubscriptionState = 'active';
    let anchor: Date;
    let periodIndex = 0;
    let periodStart: Date;
    let periodEnd: Date;
    let trialEndsAt: Date | null = null;
    if (delayed) {
      // Awaiting signup: nothing is charged now. Its periods are anchored at the start (after the
      // trial the product has, counted from the start); due work starts it then.
      state = 'awaiting_signup';
      anchor = delayedSignupAnchor(initialBillingAt!, terms, site.timeZone);
      periodIndex = -1;
      periodStart = now;
      periodEnd = initialBillingAt!;
    } else if (snapDay !== undefined) {
      // The first period runs to the next snap (a full period when that is within 24 hours).
      anchor = firstSnapPeriodEnd(now, snapDay, site.timeZone);
      periodStart = now;
      periodEnd = anchor;
      const full = snapBoundary(now, snapDay, site.timeZone).getTime() !== anchor.getTime();
      const previousSnap = snapBoundary(new Date(anchor.getTime() - 32 * 86_400_000), snapDay, site.timeZone);
      componentPeriod = full ? { chargeNow: true } : { chargeNow: true, prorationPeriodStart: previousSnap };
      const amount = full
        ? terms.priceInCents
        : prorate(terms.priceInCents, anchor.getTime() - now.getTime(), anchor.getTime() - previousSnap.getTime());
      charges.push({
        kind: 'baseline',
        amountInCents: amount,
        memo: `${terms.name} (${describePeriod(now, anchor)}${full ? '' : ', prorated'})`,
      });
      if ((terms.initialChargeInCents ?? 0) > 0) charges.push(setupFee(terms));
    } else if (nextBillingAt !== undefined && nextBillingAt.getTime() > now.getTime()) {
      // An import or custom trial: nothing is charged until the given instant.
      anchor = nextBillingAt;
      periodIndex = -1;
      periodStart = now;
      periodEnd = nextBillingAt;
    } else if (terms.trialInterval !== null && nextBillingAt === undefined) {
      state = 'trialing';
      trialEndsAt = addInterval(
        now,
        { count: terms.trialInterval, unit: terms.trialIntervalUnit ?? 'month' },
        1,
        site.timeZone,
      );
      anchor = trialEndsAt;
      periodIndex = -1;
      periodStart = now;
      periodEnd = trialEndsAt;
      if ((terms.trialPriceInCents ?? 0) > 0)
        charges.push({ kind: 'trial', amountInCents: terms.trialPriceInCents!, memo: `${terms.name} trial` });
      if ((terms.initialChargeInCents ?? 0) > 0 && !terms.initialChargeAfterTrial) charges.push(setupFee(terms));
    } else {
      // A signup now, or an import whose next billing time is now or past: the spec's "a past or
      // immediate time makes it process now". It is assessed once, now, and its first period starts
      // at that assessment, anchored as any new period (the renewal one interval later, in the
      // site zone). Anchoring at the past time instead would leave every period since then due at
      // once and charge them all (a year back: 13 charges). Missed periods of an existing
      // subscription are still caught up by due work: only the signup plan starts from now.
      anchor = now;
      const period = billingPeriod(anchor, 0, interval, site.timeZone);
      periodStart = period.start;
      periodEnd = period.end;
      charges.push({
        kind: 'baseline',
        amountInCents: terms.priceInCents,
        memo: `${terms.name} (${describePeriod(period.start, period.end)})`,
      });
      if ((terms.initialChargeInCents ?? 0) > 0) charges.push(setupFee(terms));
    }
    if (nextBillingAt === undefined && terms.trialInterval === null && snapDay === undefined && !delayed)
      componentPeriod = { chargeNow: true };
    if (nextBillingAt !== undefined && nextBillingAt.getTime() <= now.getTime()) componentPeriod = { chargeNow: true };
    const components = await planSignupComponents(tx, site, product!.product.familyId, input.components ?? [], {
      start: periodStart,
      end: periodEnd,
      now,
      ...componentPeriod,
    });
    for (const l of components.lines)
      charges.push({ kind: l.kind, amountInCents: l.amountInCents, memo: l.memo, componentId: l.componentId });
    const coupons: CouponRecord[] = [];
    for (const code of [...(input.couponCode === undefined ? [] : [input.couponCode]), ...(input.couponCodes ?? [])]) {
      coupons.push(await couponForSignup(tx, site.id, code, product!.product.familyId, now));
    }
    if (input.metafields !== undefined) {
      const values = Object.entries(input.metafields).map(([name, value]) => ({ name, value }));
      await checkMetadataValues(tx, site.id, 'subscription', values);
    }
    let referredBy: number | undefined;
    if (input.ref !== undefined && input.ref !== '') {
      const referrer =
        typeof input.ref === 'string'
          ? await tx.subscriptions.findByReferralCode(site.id, input.ref.trim().toUpperCase())
          : undefined;
      if (!referrer) throw invalid(`Ref: '${String(input.ref)}' is not a valid referral code.`, 'ref');
      referredBy = referrer.id;
    }
    const stacking = stackingErrors([], coupons);
    if (stacking.length > 0) throw validationError(stacking.map((message) => ({ message, attribute: 'coupon_codes' })));
    const chargedNow = charges.reduce((sum, c) => sum + c.amountInCents, 0);
    // A free trial defers the coupon to the first amount due.
    const discounts = chargedNow > 0 ? couponDiscounts(charges, coupons) : [];
    const totalInCents = chargedNow + discounts.reduce((sum, d) => sum + d.amountInCents, 0);
    // Under remittance the signup's invoice is left open for the customer: no card is needed.
    // A prepaid signup charges its initial funding instead; the first period is paid from it.
    const chargeNowInCents =
      prepaid !== undefined
        ? prepaid.initialFundingAmountInCents
        : collectableAmount({ paymentCollectionMethod }, Math.max(0, totalInCents));
    if (prepaid !== undefined && state === 'awaiting_signup')
      throw invalid(
        'Initial billing at: a prepaid subscription is funded at signup and cannot start later.',
        'initial_billing_at',
      );
    if (prepaid !== undefined && !hasCard)
      throw invalid('A payment method is required: a prepaid subscription is funded from a card.', 'credit_card');
    if (chargeNowInCents > 0 && !hasCard)
      throw invalid(
        'A payment method is required: the signup charge cannot be collected without a card.',
        'credit_card',
      );
    if (
      totalInCents === 0 &&
      !hasCard &&
      collectsAutomatically({ paymentCollectionMethod }) &&
      terms.requireCreditCard &&
      terms.priceInCents > 0
    ) {
      throw invalid('Credit card: is required for this product.', 'credit_card');
    }
    // A delayed signup's life is counted from its start (and moves with it: `moveDelayedStart`).
    const expiresAt = expiresAtGiven ?? productExpiry(delayed ? initialBillingAt! : now, terms, site.timeZone);
    return {
      site,
      product: product!,
      ...(customPrice === undefined ? {} : { customPrice }),
      customer,
      state,
      anchor,
      periodIndex,
      periodStart,
      periodEnd,
      trialEndsAt,
      expiresAt,
      expiresAtGiven: expiresAtGiven !== undefined,
      paymentProfile,
      snapDay,
      referredBy,
      reference,
      coupons,
      componentRows: components.rows,
      discounts,
      charges,
      totalInCents: Math.max(0, totalInCents),
      paymentCollectionMethod,
      prepaid,
      chargeNowInCents,
      offerId,
    };
  }
}

const REFERENCE_TAKEN = 'Reference: must be unique - that value has been taken.';

/** An instant of a signup field, its problems reported on `attribute`; undefined when it is not one. */
function instantField(
  value: Date | string,
  zone: string,
  label: string,
  attribute: string,
  errors: ValidationCollector,
): Date | undefined {
  try {
    return parseInstant(value, zone, label);
  } catch (error) {
    if (!isBillingError(error, 'validation')) throw error;
    for (const detail of error.details) errors.add(detail.message, attribute);
    return undefined;
  }
}

function referenceTaken(): BillingError {
  return invalid(REFERENCE_TAKEN, 'customer.reference');
}

/** A subscription's reference taken by another of the site's subscriptions; the service's words, as for customers. */
function subscriptionReferenceTaken(): BillingError {
  return invalid(REFERENCE_TAKEN, 'subscription.reference');
}

/**
 * A subscription reference as stored: trimmed, null when missing or blank. Anything but text is
 * refused (the wire reads numbers as text already), as is one longer than 255 characters.
 */
function checkReference(value: unknown, errors: ValidationCollector): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    errors.add('Reference: must be a string.', 'subscription.reference');
    return null;
  }
  const trimmed = value.trim();
  if (trimmed.length > 255) errors.add('Reference: is too long (maximum is 255 characters).', 'subscription.reference');
  return trimmed === '' ? null : trimmed;
}

/**
 * Sets a subscription's reference inside a command (for `PUT /subscriptions/{id}.json`, alone or
 * with other changes): checked, then written at the subscription's version. Returns the record as
 * written (unchanged when the reference is the same).
 */
export async function setReferenceInCommand(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  input: string | null,
): Promise<SubscriptionRecord> {
  const errors = new ValidationCollector();
  const reference = checkReference(input, errors);
  errors.throwIfAny();
  if (reference === (subscription.reference ?? null)) return subscription;
  if (reference !== null) {
    const holder = await ctx.tx.subscriptions.findByReference(site.id, reference);
    if (holder !== undefined && holder.id !== subscription.id) throw subscriptionReferenceTaken();
  }
  let moved: SubscriptionRecord | undefined;
  try {
    moved = await ctx.tx.subscriptions.updateAtVersion(site.id, subscription.id, subscription.version, {
      reference,
      updatedAt: ctx.now,
    });
  } catch (error) {
    if (isReferenceConflict(error)) throw subscriptionReferenceTaken();
    throw error;
  }
  if (!moved) throw new BillingError('conflict', 'The subscription was changed by another request; try again.');
  return moved;
}

/** Inserts a subscription; a reference taken meanwhile is the 422 a client can act on, not a retry. */
async function insertSubscription(tx: StorageTransaction, subscription: NewSubscription): Promise<SubscriptionRecord> {
  try {
    return await tx.subscriptions.insert(subscription);
  } catch (error) {
    if (isReferenceConflict(error)) throw subscriptionReferenceTaken();
    throw error;
  }
}

/** A `conflict` from a repository about the reference index (its data names the reference). */
function isReferenceConflict(error: unknown): boolean {
  return (
    error instanceof BillingError &&
    error.code === 'conflict' &&
    typeof error.data === 'object' &&
    error.data !== null &&
    'reference' in error.data
  );
}

/** The reference a new customer will be stored with (trimmed, as `insertCustomer` stores it), if any. */
function newReference(customer: CustomerInput | undefined): string | undefined {
  const reference = customer?.reference;
  return typeof reference === 'string' && reference.trim() !== '' ? reference.trim() : undefined;
}

/** Redeems each coupon atomically; a coupon used up since the plan fails the command. */
async function redeemCoupons(
  tx: StorageTransaction,
  siteId: number,
  coupons: readonly CouponRecord[],
  now: Date,
): Promise<void> {
  for (const coupon of coupons) {
    if (!(await tx.coupons.redeem(siteId, coupon.id, now))) {
      throw validationError([
        { message: `Coupon Code: '${coupon.code}' - Coupon has reached its usage limit.`, attribute: 'coupon_code' },
      ]);
    }
  }
}

/**
 * The discount line of each coupon over the charges of one assessment (all charges
 * of the assessment are discounted), as negative adjustment amounts with the service's memo.
 */
export function couponDiscounts(
  charges: readonly { kind: string; amountInCents: number }[],
  coupons: readonly CouponRecord[],
): { code: string; amountInCents: number; memo: string }[] {
  if (coupons.length === 0) return [];
  const result = computeDiscount(
    charges.map((c, i) => ({ key: `${i}:${c.kind}`, amountInCents: c.amountInCents })),
    coupons.map((c) => ({
      code: c.code,
      percentage: c.percentage,
      amountInCents: c.amountInCents,
      allowNegativeBalance: c.allowNegativeBalance,
      compoundingStrategy: c.compoundingStrategy,
    })),
  );
  return result.perCoupon
    .filter((d) => d.discountInCents > 0)
    .map((d) => {
      const coupon = coupons.find((c) => c.code === d.code)!;
      return {
        code: d.code,
        amountInCents: -d.discountInCents,
        memo: `Coupon: ${d.code}${coupon.description ? ` - ${coupon.description}` : ''}`,
      };
    });
}

/** Counts one more use of each coupon that gave a discount (for `durationPeriodCount`). */
export function couponUsesAfter(
  uses: Readonly<Record<string, unknown>>,
  applied: readonly { code: string }[],
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [code, count] of Object.entries(uses)) if (typeof count === 'number') out[code] = count;
  for (const { code } of applied) out[code] = (out[code] ?? 0) + 1;
  return out;
}

/** Runs `work` again (up to `times` in all) when it fails with a `conflict`. */
async function retryOnConflict<T>(times: number, work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= times || !(error instanceof BillingError && error.code === 'conflict')) throw error;
    }
  }
}

/** A referral code no subscription of the site has yet (checked first; the unique index decides). */
async function freeReferralCode(tx: StorageTransaction, siteId: number): Promise<string> {
  for (let i = 0; i < 5; i++) {
    const code = generateReferralCode(randomBytes);
    if (!(await tx.subscriptions.findByReferralCode(siteId, code))) return code;
  }
  return generateReferralCode(randomBytes);
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
  extra: Partial<
    Pick<NewTransaction, 'success' | 'gatewayTransactionId' | 'periodIndex' | 'paymentId' | 'componentId'>
  > = {},
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
    componentId: extra.componentId ?? null,
    periodIndex: extra.periodIndex ?? null,
    gatewayTransactionId: extra.gatewayTransactionId ?? null,
    createdAt: at,
    balanceDeltaInCents: balanceDelta(type, amountInCents),
  };
}

/** Records `payment_success` or `payment_failure` for a ledger payment. */
export function recordPayment(
  ctx: CommandContext,
  subscription: SubscriptionRecord,
  payment: TransactionRecord,
  success: boolean,
): void {
  ctx.record({
    siteId: subscription.siteId,
    key: success ? 'payment_success' : 'payment_failure',
    subjectType: 'subscription',
    subjectId: subscription.id,
    payload: {
      subscription: { id: subscription.id, state: subscription.state },
      transaction: { id: payment.id, amount_in_cents: payment.amountInCents },
    },
  });
}

/** The read view of a subscription. */
export async function loadView(tx: StorageTransaction, siteId: number, id: number): Promise<SubscriptionView> {
  const subscription = await loadSubscription(tx, siteId, id);
  const version = await tx.catalog.findProductVersion(siteId, subscription.productId, subscription.productVersion);
  const product = await tx.catalog.findProduct(siteId, subscription.productId);
  if (!version || !product)
    throw new BillingError('storage', `Subscription ${id} refers to a missing product version.`);
  return {
    subscription,
    balanceInCents: await tx.ledger.balance(siteId, id),
    prepaymentBalanceInCents: await prepaymentBalance(tx, siteId, id),
    product: await withPricePoints(tx, { product, version }),
    customer: await loadCustomer(tx, siteId, subscription.customerId),
    paymentProfile:
      subscription.paymentProfileId === null
        ? null
        : ((await tx.customers.findPaymentProfile(siteId, subscription.paymentProfileId)) ?? null),
  };
}

/** Query of a subscription list, as the API takes it. */
export interface SubscriptionListQuery {
  /** One state or several; `canceled` is accepted for `cancelled`. */
  readonly state?: string | readonly string[];
  readonly productId?: number;
  /** Only this customer's subscriptions. */
  readonly customerId?: number;
  readonly couponCode?: string;
  readonly dateField?: SubscriptionDateField;
  /** `YYYY-MM-DD`, inclusive, in the site zone. */
  readonly startDate?: string;
  readonly endDate?: string;
  /** Instants (any form parseInstant takes); they override the date forms. */
  readonly startDatetime?: string;
  readonly endDatetime?: string;
  /** Only subscriptions whose metafield has exactly this value. */
  readonly metadata?: Readonly<Record<string, string>>;
  readonly sort?: SubscriptionDateField | 'signup_date' | 'period_start' | 'period_end' | 'next_assessment';
  readonly direction?: 'asc' | 'desc';
  readonly page?: number;
  readonly perPage?: number;
}

const SORT_ALIASES: Readonly<Record<string, SubscriptionDateField>> = {
  signup_date: 'created_at',
  period_start: 'current_period_starts_at',
  period_end: 'current_period_ends_at',
  next_assessment: 'next_assessment_at',
};

/** Turns an API query into a storage filter; undefined when it can match nothing. */
async function listFilter(
  tx: StorageTransaction,
  site: SiteRecord,
  query: SubscriptionListQuery,
): Promise<SubscriptionFilter | undefined> {
  const errors = new ValidationCollector();
  const states =
    query.state === undefined
      ? undefined
      : (Array.isArray(query.state) ? query.state : [query.state]).map((raw) => {
          const state = raw === 'canceled' ? 'cancelled' : raw;
          if (!SUBSCRIPTION_STATES.includes(state as SubscriptionState))
            errors.add(`State: '${raw}' is not a valid state.`, 'state');
          return state as SubscriptionState;
        });
  const sort = query.sort === undefined ? undefined : (SORT_ALIASES[query.sort] ?? query.sort);
  if (sort !== undefined && !DATE_FIELDS.includes(sort))
    errors.add(`Sort: '${query.sort}' is not a valid sort.`, 'sort');
  if (query.dateField !== undefined && !DATE_FIELDS.includes(query.dateField))
    errors.add(`Date field: '${query.dateField}' is not valid.`, 'date_field');
  if (query.direction !== undefined && query.direction !== 'asc' && query.direction !== 'desc')
    errors.add("Direction: must be 'asc' or 'desc'.", 'direction');
  const start =
    query.startDatetime !== undefined
      ? errors.capture(() => parseInstant(query.startDatetime, site.timeZone, 'Start datetime'))
      : query.startDate !== undefined
        ? errors.capture(() => parseLocalDate(query.startDate, site.timeZone, 'Start date'))
        : undefined;
  const end =
    query.endDatetime !== undefined
      ? errors.capture(() => parseInstant(query.endDatetime, site.timeZone, 'End datetime'))
      : query.endDate !== undefined
        ? errors.capture(() => endOfLocalDay(parseLocalDate(query.endDate, site.timeZone, 'End date'), site.timeZone))
        : undefined;
  errors.throwIfAny();
  let ids: number[] | undefined;
  for (const [name, value] of Object.entries(query.metadata ?? {})) {
    const matching = await tx.metafields.resourcesWithValue(site.id, 'subscription', name, value);
    ids = ids === undefined ? matching : ids.filter((id) => matching.includes(id));
  }
  if (ids !== undefined && ids.length === 0) return undefined;
  return {
    ...(states === undefined ? {} : { states }),
    ...(query.productId === undefined ? {} : { productId: query.productId }),
    ...(query.customerId === undefined ? {} : { customerId: query.customerId }),
    ...(query.couponCode === undefined ? {} : { couponCode: query.couponCode.toUpperCase() }),
    ...(ids === undefined ? {} : { ids }),
    ...(start === undefined && end === undefined ? {} : { dateField: query.dateField ?? 'created_at' }),
    ...(start === undefined ? {} : { start }),
    ...(end === undefined ? {} : { end }),
    ...(sort === undefined ? {} : { sort: sort as SubscriptionDateField }),
    ...(query.direction === undefined ? {} : { direction: query.direction }),
  };
}

const SUBSCRIPTION_STATES: readonly SubscriptionState[] = [
  'trialing',
  'active',
  'soft_failure',
  'past_due',
  'unpaid',
  'cancelled',
  'expired',
  'trial_ended',
  'on_hold',
  'suspended',
  'failed_to_create',
  'awaiting_signup',
];

const DATE_FIELDS: readonly string[] = [
  'current_period_ends_at',
  'current_period_starts_at',
  'created_at',
  'activated_at',
  'canceled_at',
  'expires_at',
  'trial_started_at',
  'trial_ended_at',
  'updated_at',
  'next_assessment_at',
];

/** A payment profile as events show it: never the vault token or more than the last four. */
export function maskedProfile(profile: PaymentProfileRecord): Record<string, unknown> {
  return {
    id: profile.id,
    payment_type: profile.paymentType,
    card_type: profile.cardType,
    masked_card_number: `XXXX-XXXX-XXXX-${profile.lastFour}`,
    expiration_month: profile.expirationMonth,
    expiration_year: profile.expirationYear,
  };
}

/** A complete billing address when the card pays for a taxed product (the service's rule). */
export function requireTaxAddress(taxed: boolean, address: Partial<AddressFields>): void {
  if (!taxed) return;
  const errors = new ValidationCollector();
  const labels: [keyof AddressFields, string][] = [
    ['address', 'Billing address'],
    ['city', 'Billing city'],
    ['state', 'Billing state'],
    ['zip', 'Billing zip code'],
    ['country', 'Billing country'],
  ];
  for (const [field, label] of labels) {
    if (typeof address[field] !== 'string' || address[field]!.trim() === '')
      errors.add(`${label}: cannot be blank.`, `payment_profile.billing_${field}`);
  }
  errors.throwIfAny();
}

/** Checks an imported vault profile: a token and a valid expiry; card type and last four as given. */
export function parseImport(input: PaymentProfileImport, gateway: PaymentGateway): StoredMethod {
  const errors = new ValidationCollector();
  const token = typeof input.vaultToken === 'string' ? input.vaultToken.trim() : '';
  if (token === '') errors.add('Vault token: cannot be blank.', 'payment_profile.vault_token');
  const vault =
    typeof input.currentVault === 'string' && input.currentVault.trim() !== '' ? input.currentVault.trim() : undefined;
  // A token of another gateway cannot be charged here: every renewal would fail. Refused before
  // anything is written, rather than discovered at the first charge.
  if (vault !== undefined && !acceptsVault(gateway, vault))
    errors.add(
      `Current vault: ${vault} is not the gateway of this server (${gateway.name}); import a token of ${vaultNamesOf(gateway).join(' or ')}.`,
      'payment_profile.current_vault',
    );
  const lastFour = input.lastFour ?? '';
  if (lastFour !== '' && !/^\d{4}$/.test(lastFour))
    errors.add('Last four: must be 4 digits.', 'payment_profile.last_four');
  const expiry = errors.capture(() => parseExpiry(input.expirationMonth, input.expirationYear, 'payment_profile'));
  errors.throwIfAny();
  return {
    vaultToken: token,
    customerVaultToken: input.customerVaultToken ?? null,
    currentVault: vault ?? gateway.name,
    cardType: input.cardType ?? 'bogus',
    lastFour,
    expirationMonth: expiry!.month,
    expirationYear: expiry!.year,
    firstName: input.firstName,
    lastName: input.lastName,
  };
}

/** The `current_vault` names whose tokens the gateway charges ({@link PaymentGateway.vaultNames}). */
export function vaultNamesOf(gateway: PaymentGateway): readonly string[] {
  const names = gateway.vaultNames;
  return names !== undefined && names.length > 0 ? names : [gateway.name];
}

/** Whether an imported profile's `current_vault` names this gateway (case and spaces aside). */
export function acceptsVault(gateway: PaymentGateway, vault: string): boolean {
  const wanted = vault.trim().toLowerCase();
  return vaultNamesOf(gateway).some((name) => name.toLowerCase() === wanted);
}

/** Whether the gateway takes `value` as a card token of its own ({@link PaymentGateway.isCardToken}). */
export function takesCardToken(gateway: PaymentGateway, value: string): boolean {
  const check = gateway.isCardToken;
  return typeof check === 'function' && check.call(gateway, value) === true;
}

/** Validates a card expiry given as numbers or strings. */
function parseExpiry(monthInput: unknown, yearInput: unknown, prefix: string): { month: number; year: number } {
  const errors = new ValidationCollector();
  const month = Number(typeof monthInput === 'string' ? monthInput.trim() : monthInput);
  const year = Number(typeof yearInput === 'string' ? yearInput.trim() : yearInput);
  const label = prefix === 'credit_card' ? 'Credit card expiration' : 'Expiration';
  if (monthInput === undefined || monthInput === '')
    errors.add(`${label} month: cannot be blank.`, `${prefix}.expiration_month`);
  else if (!Number.isInteger(month) || month < 1 || month > 12)
    errors.add(`${label} month: must be a number from 1 to 12.`, `${prefix}.expiration_month`);
  if (yearInput === undefined || yearInput === '')
    errors.add(`${label} year: cannot be blank.`, `${prefix}.expiration_year`);
  else if (!Number.isInteger(year) || year < 2000 || year > 2200)
    errors.add(`${label} year: must be a four-digit year.`, `${prefix}.expiration_year`);
  errors.throwIfAny();
  return { month, year };
}

/** Checks a card's number and expiry (the service's messages), ready for the gateway. */
export function parseCard(input: CreditCardInput, gateway?: PaymentGateway): CardInput {
  const errors = new ValidationCollector();
  const given = typeof input.fullNumber === 'string' ? input.fullNumber.trim() : '';
  // A gateway's own card token (a Stripe PaymentMethod id) stands where the number goes; the
  // gateway tokenizes it as it is, so it is neither stripped nor checked for digits.
  const token = gateway !== undefined && given !== '' && takesCardToken(gateway, given);
  const number = token ? given : given.replace(/[\s-]/g, '');
  if (number === '') errors.add('Credit card number: cannot be blank.', 'credit_card.full_number');
  else if (!token && !/^\d+$/.test(number))
    errors.add('Credit card number: must contain only digits.', 'credit_card.full_number');
  const expiry = errors.capture(() => parseExpiry(input.expirationMonth, input.expirationYear, 'credit_card'));
  errors.throwIfAny();
  return {
    fullNumber: number,
    expirationMonth: expiry!.month,
    expirationYear: expiry!.year,
    ...(input.cvv === undefined ? {} : { cvv: input.cvv }),
    ...(input.firstName === undefined ? {} : { firstName: input.firstName }),
    ...(input.lastName === undefined ? {} : { lastName: input.lastName }),
  };
}

/**
 * Checks a new card for a subscription (the number, and a full address when its product is taxed)
 * and tokenizes it: done before any transaction, since it calls the gateway.
 */
export async function prepareNewCard(
  gateway: PaymentGateway,
  current: SubscriptionView,
  input: CreditCardInput & { billingAddress?: Partial<AddressFields> },
): Promise<NewCard> {
  const card = parseCard(input, gateway);
  requireTaxAddress(current.product.version.terms.taxable, {
    ...current.paymentProfile?.billingAddress,
    ...input.billingAddress,
  });
  const tokenized = await gateway.tokenize({ ...card, ...sameGatewayCustomer(gateway, current.paymentProfile) });
  if (!tokenized.ok) throw invalid(tokenized.message, 'credit_card.full_number');
  return { tokenized, card, billingAddress: input.billingAddress, vault: gateway.name };
}

/** A card checked and tokenized for a subscription, ready to be written by {@link replaceCardInCommand}. */
export interface NewCard {
  readonly tokenized: Extract<TokenizeResult, { ok: true }>;
  readonly card: CardInput;
  readonly billingAddress: Partial<AddressFields> | undefined;
  /** The gateway's name, shown as the profile's `current_vault`. */
  readonly vault: string;
}

/**
 * Gives a subscription a new payment profile for a tokenized card (names and address default to
 * the previous profile's, then the customer's) and records `subscription_card_update`. Returns the
 * subscription as written.
 */
export async function replaceCardInCommand(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  { tokenized, card, billingAddress, vault }: NewCard,
): Promise<SubscriptionRecord> {
  const id = subscription.id;
  const customer = await loadCustomer(ctx.tx, site.id, subscription.customerId);
  const previous =
    subscription.paymentProfileId === null
      ? undefined
      : await ctx.tx.customers.findPaymentProfile(site.id, subscription.paymentProfileId);
  const profile = await ctx.tx.customers.insertPaymentProfile({
    siteId: site.id,
    customerId: customer.id,
    paymentType: 'credit_card',
    vaultToken: tokenized.vaultToken,
    customerVaultToken: tokenized.customerVaultToken,
    currentVault: vault,
    cardType: tokenized.cardType,
    lastFour: tokenized.lastFour,
    expirationMonth: card.expirationMonth,
    expirationYear: card.expirationYear,
    firstName: card.firstName ?? previous?.firstName ?? customer.firstName,
    lastName: card.lastName ?? previous?.lastName ?? customer.lastName,
    billingAddress: { ...(previous?.billingAddress ?? customer.address), ...billingAddress } as AddressFields,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  });
  const moved = await ctx.tx.subscriptions.updateAtVersion(site.id, id, subscription.version, {
    paymentProfileId: profile.id,
    updatedAt: ctx.now,
  });
  if (!moved) throw new BillingError('conflict', 'The subscription was changed by another request; try again.');
  ctx.record({
    siteId: site.id,
    key: 'subscription_card_update',
    subjectType: 'subscription',
    subjectId: id,
    payload: {
      subscription: { id },
      previous_payment_profile: previous ? maskedProfile(previous) : null,
      updated_payment_profile: maskedProfile(profile),
    },
  });
  return moved;
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const SUBSCRIPTION_METHODS = [
  'create',
  'get',
  'list',
  'transactions',
  'updateCard',
  'lookup',
  'setReference',
  'override',
] as const;

/**
 * The payer's customer at `gateway`, when its current profile was vaulted there: a new card of the
 * same payer joins it (at Stripe, one Customer keeps all of a payer's cards).
 */
export function sameGatewayCustomer(
  gateway: PaymentGateway,
  profile: { readonly currentVault: string; readonly customerVaultToken: string | null } | null | undefined,
): { customerVaultToken?: string } {
  const token = profile?.customerVaultToken;
  return token != null && token !== '' && acceptsVault(gateway, profile!.currentVault)
    ? { customerVaultToken: token }
    : {};
}
