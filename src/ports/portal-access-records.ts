/** Records and repository of customers' billing-portal access. Same conventions as `storage.ts`. */

/**
 * A customer's billing-portal access, once it has been enabled. A customer without one may use
 * portal links as before (access is only ever taken away by a revocation); a revoked one may not.
 */
export interface PortalAccessRecord {
  readonly id: number;
  readonly siteId: number;
  readonly customerId: number;
  /** Whether the customer may use the billing portal; false once revoked (until enabled again). */
  readonly enabled: boolean;
  /** When access was first enabled (the service's `portal_customer_created_at`). */
  readonly createdAt: Date;
  /** When an invitation was last sent (asked for: the mail itself goes out through due work). */
  readonly inviteLastSentAt: Date | null;
  /** When an invitation was last accepted; the engine records none yet, so always null for now. */
  readonly inviteLastAcceptedAt: Date | null;
  /** When access was last revoked; null when it never was. */
  readonly revokedAt: Date | null;
  readonly updatedAt: Date;
}

/** Billing-portal access of customers: at most one row per customer. */
export interface PortalAccessRepository {
  /** The customer's row, or undefined when access was never enabled. */
  find(siteId: number, customerId: number): Promise<PortalAccessRecord | undefined>;
  /**
   * Writes the customer's row: inserts it, or replaces every field but `id` and `createdAt` of the
   * existing one (race-safe: concurrent saves of one customer leave one row).
   */
  save(record: Omit<PortalAccessRecord, 'id'>): Promise<PortalAccessRecord>;
}
