import assert from 'node:assert/strict';
import type {
  CustomerRecord,
  NewTransaction,
  PaymentAttemptRecord,
  PaymentProfileRecord,
  ProductFamilyRecord,
  ProductRecord,
  ProductTerms,
  SiteRecord,
  Storage,
  SubscriptionRecord,
  TransactionRecord,
} from 'billing-engine';
import { BillingError } from 'billing-engine';
import { at, newSiteFixture, T0 } from './harness.js';

/** One day in milliseconds. */
export const DAY = 86_400_000;

/** What `customers.insert` takes. */
export type NewCustomer = Omit<CustomerRecord, 'id' | 'version'>;
/** What `customers.insertPaymentProfile` takes. */
export type NewPaymentProfile = Omit<PaymentProfileRecord, 'id'>;
/** What `subscriptions.insert` takes. */
export type NewSubscription = Omit<SubscriptionRecord, 'id' | 'version'>;
/** What `payments.insert` takes. */
export type NewPaymentAttempt = Omit<PaymentAttemptRecord, 'id'>;

/** Whether an error is the port's unique-key violation, `BillingError('conflict')`. */
export function isConflict(error: unknown): boolean {
  return error instanceof BillingError && error.code === 'conflict';
}

/**
 * Asserts that ledger lines (in id order) chain: each starts where the previous one ended, the
 * first at `from`, and each ends at its start plus its delta (`deltas`, when given, by position).
 */
export function assertChained(lines: readonly TransactionRecord[], from: number, deltas?: readonly number[]): void {
  let expected = from;
  lines.forEach((line, i) => {
    assert.equal(line.startingBalanceInCents, expected, `line ${line.id} starts at the previous ending balance`);
    const delta = deltas?.[i];
    if (delta !== undefined) {
      assert.equal(
        line.endingBalanceInCents,
        line.startingBalanceInCents + delta,
        `line ${line.id} ends at its start + delta`,
      );
    }
    expected = line.endingBalanceInCents;
  });
}

/**
 * Product terms with a mix of nulls, `true`, `false` and numbers, so a JSON document that drops
 * nulls or turns booleans into 0/1 fails a round-trip comparison.
 */
export function termsFixture(overrides: Partial<ProductTerms> = {}): ProductTerms {
  return {
    name: 'Basic',
    description: null,
    accountingCode: null,
    priceInCents: 1999,
    interval: 1,
    intervalUnit: 'month',
    trialPriceInCents: null,
    trialInterval: null,
    trialIntervalUnit: null,
    initialChargeInCents: null,
    initialChargeAfterTrial: false,
    expirationInterval: null,
    expirationIntervalUnit: null,
    requestCreditCard: true,
    requireCreditCard: false,
    taxable: false,
    ...overrides,
  };
}

/** A new product family of a site. */
export function familyFixture(
  siteId: number,
  handle: string,
  overrides: Partial<Omit<ProductFamilyRecord, 'id'>> = {},
): Omit<ProductFamilyRecord, 'id'> {
  return { siteId, name: `Family ${handle}`, handle, description: null, createdAt: T0, updatedAt: T0, ...overrides };
}

/** A new product (identity only; the terms go to `insertProduct` separately). */
export function productFixture(
  family: Pick<ProductFamilyRecord, 'siteId' | 'id'>,
  handle: string,
  overrides: Partial<Omit<ProductRecord, 'id' | 'currentVersion'>> = {},
): Omit<ProductRecord, 'id' | 'currentVersion'> {
  return {
    siteId: family.siteId,
    familyId: family.id,
    handle,
    archivedAt: null,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** A new customer of a site; the address mixes values and nulls so both must survive. */
export function customerFixture(siteId: number, overrides: Partial<NewCustomer> = {}): NewCustomer {
  return {
    siteId,
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada@example.com',
    reference: null,
    organization: null,
    phone: '+1 555 0100',
    address: { address: '1 Main St', address2: null, city: 'Springfield', state: 'IL', zip: '62701', country: 'US' },
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** A new card payment profile of a customer. */
export function paymentProfileFixture(
  customer: Pick<CustomerRecord, 'siteId' | 'id'>,
  overrides: Partial<NewPaymentProfile> = {},
): NewPaymentProfile {
  return {
    siteId: customer.siteId,
    customerId: customer.id,
    paymentType: 'credit_card',
    vaultToken: 'tok_1',
    customerVaultToken: null,
    currentVault: 'bogus',
    cardType: 'visa',
    lastFour: '1111',
    expirationMonth: 12,
    expirationYear: 2030,
    firstName: 'Ada',
    lastName: null,
    billingAddress: { address: null, address2: null, city: 'Springfield', state: null, zip: '62701', country: 'US' },
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/**
 * A new active subscription of a customer to the current version of a product. Its instants
 * are T0 plus offsets with distinct milliseconds, so truncation to seconds shows on any of them.
 */
export function subscriptionFixture(
  customer: Pick<CustomerRecord, 'siteId' | 'id'>,
  product: Pick<ProductRecord, 'id' | 'currentVersion'>,
  overrides: Partial<NewSubscription> = {},
): NewSubscription {
  return {
    siteId: customer.siteId,
    customerId: customer.id,
    productId: product.id,
    productVersion: product.currentVersion,
    reference: null,
    paymentProfileId: null,
    paymentCollectionMethod: 'automatic',
    state: 'active',
    periodAnchorAt: T0,
    periodIndex: 1,
    currentPeriodStartedAt: at(T0, 1),
    currentPeriodEndsAt: at(T0, 30 * DAY + 2),
    nextAssessmentAt: at(T0, 30 * DAY + 3),
    trialStartedAt: null,
    trialEndedAt: null,
    activatedAt: at(T0, 4),
    canceledAt: null,
    expiresAt: null,
    delayedCancelAt: null,
    cancelAtEndOfPeriod: false,
    cancellationMessage: null,
    cancellationMethod: null,
    signupPaymentId: null,
    signupRevenueInCents: 1999,
    couponCodes: [],
    referralCode: null,
    data: {},
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** A ledger line of a subscription moving its balance by `delta` (a charge when positive, a credit otherwise). */
export function ledgerLineFixture(
  subscription: Pick<SubscriptionRecord, 'siteId' | 'id' | 'customerId'>,
  delta: number,
  overrides: Partial<NewTransaction> = {},
): NewTransaction {
  return {
    siteId: subscription.siteId,
    subscriptionId: subscription.id,
    customerId: subscription.customerId,
    type: delta >= 0 ? 'charge' : 'credit',
    kind: null,
    amountInCents: delta,
    memo: `line ${delta}`,
    success: null,
    paymentId: null,
    productId: null,
    componentId: null,
    periodIndex: null,
    gatewayTransactionId: null,
    createdAt: T0,
    balanceDeltaInCents: delta,
    ...overrides,
  };
}

/** A pending payment attempt with this idempotency key; a signup payment (no subscription, no customer) by default. */
export function paymentAttemptFixture(
  siteId: number,
  idempotencyKey: string,
  overrides: Partial<NewPaymentAttempt> = {},
): NewPaymentAttempt {
  return {
    siteId,
    subscriptionId: null,
    customerId: null,
    idempotencyKey,
    amountInCents: 1999,
    currency: 'USD',
    purpose: 'signup',
    status: 'pending',
    gatewayTransactionId: null,
    message: null,
    transactionId: null,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** A site with the records every billing case builds on. */
export interface BillingSeed {
  readonly site: SiteRecord;
  readonly family: ProductFamilyRecord;
  readonly product: ProductRecord;
  readonly customer: CustomerRecord;
}

/**
 * Commits a site with one family, one product and one customer. Cases create real parents rather
 * than invent ids, because SQL adapters enforce foreign keys.
 */
export async function seedBillingSite(storage: Storage, subdomain: string): Promise<BillingSeed> {
  return storage.transaction(async (tx) => {
    const site = await tx.sites.insert(newSiteFixture(subdomain));
    const family = await tx.catalog.insertFamily(familyFixture(site.id, 'main'));
    const { product } = await tx.catalog.insertProduct(productFixture(family, 'basic'), termsFixture());
    const customer = await tx.customers.insert(customerFixture(site.id));
    return { site, family, product, customer };
  });
}
