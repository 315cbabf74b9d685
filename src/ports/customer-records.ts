/** Records and repository of customers and their payment profiles. Same conventions as `storage.ts`. */

import type { PageRequest } from './page-request.js';

/** Postal address fields shared by customers and payment profiles. */
export interface AddressFields {
  readonly address: string | null;
  readonly address2: string | null;
  readonly city: string | null;
  readonly state: string | null;
  readonly zip: string | null;
  readonly country: string | null;
}

/** A customer of a site. */
export interface CustomerRecord {
  readonly id: number;
  readonly siteId: number;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  /** The merchant's own id; unique per site when present. */
  readonly reference: string | null;
  readonly organization: string | null;
  readonly phone: string | null;
  readonly address: AddressFields;
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A stored payment method: a vault token and what may be shown of the card. Never a full number. */
export interface PaymentProfileRecord {
  readonly id: number;
  readonly siteId: number;
  readonly customerId: number;
  readonly paymentType: 'credit_card';
  readonly vaultToken: string;
  readonly customerVaultToken: string | null;
  readonly currentVault: string;
  readonly cardType: string;
  readonly lastFour: string;
  readonly expirationMonth: number;
  readonly expirationYear: number;
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly billingAddress: AddressFields;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Customers and their payment profiles. */
export interface CustomersRepository {
  /** Inserts a customer; a taken reference gives `conflict`. */
  insert(customer: Omit<CustomerRecord, 'id' | 'version'>): Promise<CustomerRecord>;
  findById(siteId: number, id: number): Promise<CustomerRecord | undefined>;
  findByReference(siteId: number, reference: string): Promise<CustomerRecord | undefined>;
  /** Version-checked update; undefined when missing or the version moved on. A taken reference gives `conflict`. */
  updateAtVersion(
    siteId: number,
    id: number,
    expectedVersion: number,
    patch: Partial<Omit<CustomerRecord, 'id' | 'siteId' | 'version' | 'createdAt'>>,
  ): Promise<CustomerRecord | undefined>;
  /** One page of the site's customers matching `filter` (all without one), by id (ascending by default). */
  list(siteId: number, page: PageRequest, filter?: CustomerFilter): Promise<CustomerRecord[]>;
  /**
   * Deletes a customer with its payment profiles; false when missing. A customer who still has
   * subscriptions is not deleted: that gives `conflict` (the service refuses it earlier anyway).
   */
  delete(siteId: number, id: number): Promise<boolean>;
  insertPaymentProfile(profile: Omit<PaymentProfileRecord, 'id'>): Promise<PaymentProfileRecord>;
  findPaymentProfile(siteId: number, id: number): Promise<PaymentProfileRecord | undefined>;
  /**
   * One page of the site's payment profiles, of one customer when `filter.customerId` is given,
   * oldest first (by id).
   */
  listPaymentProfiles(siteId: number, filter: PaymentProfileFilter, page: PageRequest): Promise<PaymentProfileRecord[]>;
  /**
   * Deletes a payment profile; false when missing. A profile a subscription still refers to is not
   * deleted: that gives `conflict` (the service detaches or refuses earlier).
   */
  deletePaymentProfile(siteId: number, id: number): Promise<boolean>;
  /** Replaces a profile's fields; undefined when missing. */
  updatePaymentProfile(
    siteId: number,
    id: number,
    patch: Partial<Omit<PaymentProfileRecord, 'id' | 'siteId' | 'customerId' | 'createdAt'>>,
  ): Promise<PaymentProfileRecord | undefined>;
}

/** Which payment profiles a list keeps. */
export interface PaymentProfileFilter {
  readonly customerId?: number;
}

/** Which customers a list keeps, and its order. Bounds are inclusive; every given condition must hold. */
export interface CustomerFilter {
  /**
   * Text found, ignoring case, in the first or last name, email, organization or reference; text
   * that is a whole number also matches the customer with that id.
   */
  readonly search?: string;
  /** The date a `start`/`end` bound applies to; default `created_at`. */
  readonly dateField?: 'created_at' | 'updated_at';
  readonly start?: Date;
  readonly end?: Date;
  /** By id; default `asc`. */
  readonly direction?: 'asc' | 'desc';
}
