import type {
  CreditNoteRecord,
  DocumentRenderExtras,
  InvoiceCustomerSnapshot,
  InvoiceRecord,
  InvoiceSeller,
} from '../../../src/invoices/model.js';

/**
 * Invoice and credit note records built by hand, for the renderers and serializers, which are pure
 * functions of a record: a renewal of 29.00 with a 10.00 component line, a 3.90 coupon and a
 * payment of 20.00, leaving 15.10 due. Each test overrides what it is about.
 */

export const SELLER: InvoiceSeller = {
  name: 'Acme Projects Inc.',
  address: {
    address: '1 Market Street',
    address2: 'Suite 400',
    city: 'San Francisco',
    state: 'CA',
    zip: '94105',
    country: 'US',
  },
  phone: '+1 415 555 0100',
};

export const CUSTOMER: InvoiceCustomerSnapshot = {
  customerId: 7,
  firstName: 'Ada',
  lastName: 'Lovelace',
  organization: 'Analytical Engines',
  email: 'ada@example.com',
  reference: 'ada-1',
  billingAddress: {
    address: '12 St James Square',
    address2: null,
    city: 'London',
    state: null,
    zip: 'SW1Y 4JH',
    country: 'GB',
  },
};

export const EXTRAS: DocumentRenderExtras = {
  metafields: [{ name: 'PO number', value: 'PO-4471' }],
  timeZone: 'America/New_York',
};

const ISSUED_AT = new Date('2026-02-15T17:00:00Z');

export function sampleInvoice(overrides: Partial<InvoiceRecord> = {}): InvoiceRecord {
  return {
    id: 41,
    uid: 'inv_8gk5bwkct3gqt',
    siteId: 1,
    subscriptionId: 12,
    customerId: CUSTOMER.customerId,
    number: 'INV-1042',
    sequenceNumber: 1042,
    status: 'open',
    role: 'renewal',
    collectionMethod: 'automatic',
    issueDate: '2026-02-15',
    dueDate: '2026-02-15',
    paidDate: null,
    currency: 'USD',
    memo: 'Thank you for your business.',
    seller: SELLER,
    customer: CUSTOMER,
    productName: 'Pro',
    productFamilyName: 'Acme Projects',
    periodIndex: 1,
    periodStart: new Date('2026-02-15T17:00:00Z'),
    periodEnd: new Date('2026-03-15T16:00:00Z'),
    lineItems: [
      {
        transactionId: 301,
        title: 'Pro',
        description: 'Pro plan, monthly',
        quantity: '1',
        unitPriceInCents: 2900,
        subtotalInCents: 2900,
        discountInCents: 290,
        taxInCents: 0,
        totalInCents: 2610,
        periodStart: new Date('2026-02-15T17:00:00Z'),
        periodEnd: new Date('2026-03-15T16:00:00Z'),
        productId: 3,
        componentId: null,
        kind: 'baseline',
      },
      {
        transactionId: 302,
        title: 'Seats',
        description: '2 seats at 5.00',
        quantity: '2',
        unitPriceInCents: 500,
        subtotalInCents: 1000,
        discountInCents: 100,
        taxInCents: 0,
        totalInCents: 900,
        periodStart: new Date('2026-02-15T17:00:00Z'),
        periodEnd: new Date('2026-03-15T16:00:00Z'),
        productId: 3,
        componentId: 9,
        kind: 'component',
      },
    ],
    discounts: [{ transactionId: 303, title: 'Spring sale', couponCode: 'SPRING10', amountInCents: 390 }],
    taxes: [],
    credits: [],
    payments: [
      {
        transactionId: 304,
        amountInCents: 2000,
        memo: 'Check 1001',
        appliedAt: new Date('2026-02-16T15:00:00Z'),
        method: 'external',
        gatewayTransactionId: null,
      },
    ],
    subtotalInCents: 3900,
    discountInCents: 390,
    taxInCents: 0,
    totalInCents: 3510,
    creditInCents: 0,
    paidInCents: 2000,
    refundInCents: 0,
    dueInCents: 1510,
    createdAt: ISSUED_AT,
    updatedAt: new Date('2026-02-16T15:00:00Z'),
    ...overrides,
  };
}

export function sampleCreditNote(overrides: Partial<CreditNoteRecord> = {}): CreditNoteRecord {
  return {
    id: 5,
    uid: 'cn_7b3zq2k4m9xyw',
    siteId: 1,
    subscriptionId: 12,
    customerId: CUSTOMER.customerId,
    invoiceUid: 'inv_8gk5bwkct3gqt',
    number: 'CN-17',
    sequenceNumber: 17,
    status: 'applied',
    issueDate: '2026-02-20',
    currency: 'USD',
    memo: 'Refund for the unused seats',
    seller: SELLER,
    customer: CUSTOMER,
    lineItems: [
      {
        title: 'Refund: Seats',
        description: 'Refund of payment 304',
        quantity: '1',
        unitPriceInCents: 750,
        subtotalInCents: 750,
        taxInCents: 0,
        totalInCents: 750,
        transactionId: 310,
      },
    ],
    totalInCents: 750,
    refundTransactionIds: [310],
    createdAt: new Date('2026-02-20T14:00:00Z'),
    ...overrides,
  };
}
