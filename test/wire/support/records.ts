import type {
  CustomerRecord,
  PaymentProfileRecord,
  ProductFamilyRecord,
  ProductView,
  SubscriptionRecord,
  SubscriptionView,
  TransactionRecord,
} from 'billing-engine';

const AT = new Date('2026-01-15T12:00:00Z');
const NEXT = new Date('2026-02-15T12:00:00Z');

const address = { address: null, address2: null, city: null, state: null, zip: null, country: null };

/** A family record as the engine returns it. */
export const family: ProductFamilyRecord = {
  id: 3,
  siteId: 1,
  name: 'Acme Projects',
  handle: 'acme-projects',
  description: null,
  createdAt: AT,
  updatedAt: AT,
};

/** Version 2 of product 7, 10.00 a month. */
export const productView: ProductView = {
  product: {
    id: 7,
    siteId: 1,
    familyId: 3,
    handle: 'pro',
    currentVersion: 2,
    archivedAt: null,
    createdAt: AT,
    updatedAt: NEXT,
  },
  version: {
    siteId: 1,
    productId: 7,
    version: 2,
    createdAt: NEXT,
    terms: {
      name: 'Pro',
      description: 'The pro plan',
      accountingCode: 'PRO',
      priceInCents: 1000,
      interval: 1,
      intervalUnit: 'month',
      trialPriceInCents: null,
      trialInterval: 14,
      trialIntervalUnit: 'day',
      initialChargeInCents: 500,
      initialChargeAfterTrial: false,
      expirationInterval: null,
      expirationIntervalUnit: null,
      requestCreditCard: true,
      requireCreditCard: true,
      taxable: false,
    },
  },
};

/** A customer record. */
export const customer: CustomerRecord = {
  id: 11,
  siteId: 1,
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  reference: 'ada-1',
  organization: null,
  phone: null,
  address: { ...address, city: 'London', zip: 'N1' },
  version: 1,
  createdAt: AT,
  updatedAt: AT,
};

/** A Visa card profile. */
export const profile: PaymentProfileRecord = {
  id: 21,
  siteId: 1,
  customerId: 11,
  paymentType: 'credit_card',
  vaultToken: 'tok_abc',
  customerVaultToken: null,
  currentVault: 'bogus',
  cardType: 'visa',
  lastFour: '1111',
  expirationMonth: 12,
  expirationYear: 2030,
  firstName: 'Ada',
  lastName: 'Lovelace',
  billingAddress: address,
  createdAt: AT,
  updatedAt: AT,
};

/** An active subscription record. */
export const subscription: SubscriptionRecord = {
  id: 31,
  siteId: 1,
  customerId: 11,
  productId: 7,
  productVersion: 2,
  paymentProfileId: 21,
  paymentCollectionMethod: 'automatic',
  reference: null,
  state: 'active',
  periodAnchorAt: AT,
  periodIndex: 0,
  currentPeriodStartedAt: AT,
  currentPeriodEndsAt: NEXT,
  nextAssessmentAt: NEXT,
  trialStartedAt: null,
  trialEndedAt: null,
  activatedAt: AT,
  canceledAt: null,
  expiresAt: null,
  delayedCancelAt: null,
  cancelAtEndOfPeriod: false,
  cancellationMessage: null,
  cancellationMethod: null,
  signupPaymentId: 42,
  signupRevenueInCents: 1500,
  couponCodes: [],
  referralCode: null,
  data: {},
  version: 3,
  createdAt: AT,
  updatedAt: AT,
};

/** The read view of {@link subscription}. */
export const subscriptionView: SubscriptionView = {
  subscription,
  balanceInCents: 0,
  product: productView,
  customer,
  paymentProfile: profile,
};

/** A successful payment line. */
export const payment: TransactionRecord = {
  id: 42,
  siteId: 1,
  subscriptionId: 31,
  customerId: 11,
  type: 'payment',
  kind: null,
  amountInCents: 1500,
  memo: 'Payment for: Pro',
  success: true,
  startingBalanceInCents: 1500,
  endingBalanceInCents: 0,
  paymentId: null,
  productId: 7,
  componentId: null,
  periodIndex: null,
  gatewayTransactionId: 'ch_000001',
  refundedAmountInCents: 0,
  createdAt: AT,
};
