/** Records and repositories of due work (the worker's queue) and the outbox (committed events). Same conventions as `storage.ts`. */

/** Kinds of scheduled work. Later features add kinds; the worker dispatches on them. */
export type DueWorkKind =
  | 'renewal'
  | 'trial_end'
  | 'delayed_cancel'
  | 'delayed_product_change'
  | 'dunning_retry'
  | 'expiration'
  | 'auto_resume'
  | 'notice'
  | 'webhook_delivery'
  | 'reconcile_payment'
  | 'expiring_card_scan'
  /** An email to build and hand to the mailer (its subject is an invoice, subscription or customer). */
  | 'mail_delivery'
  /** The start of a delayed signup (`initial_billing_at`): its first charge, then active or trialing. */
  | 'delayed_signup';

/**
 * The kinds of due work whose subject is a subscription. A claim never hands out a row of these
 * kinds while an earlier open (pending or claimed) row of these kinds exists for the same site and
 * subject, earlier meaning `(dueAt, id)` order. So a subscription's work runs in due order even
 * when several workers catch up on a backlog: a dunning retry that cancels the subscription always
 * runs before the renewal due after it, never beside it.
 */
export const SUBSCRIPTION_WORK_KINDS: readonly DueWorkKind[] = [
  'renewal',
  'trial_end',
  'delayed_cancel',
  'delayed_product_change',
  'dunning_retry',
  'expiration',
  'auto_resume',
  'notice',
  'delayed_signup',
];

/** A row of due work: something that must happen at or after `dueAt`. */
export interface DueWorkRecord {
  readonly id: number;
  readonly siteId: number;
  readonly kind: DueWorkKind;
  /** The record the work is about (a subscription id, a webhook id). */
  readonly subjectId: number;
  readonly dueAt: Date;
  /**
   * Unique per site: `renewal:42:7` is the renewal of subscription 42's period 7. Scheduling the
   * same key twice is a no-op, which is what makes a second renewal of one period impossible.
   */
  readonly uniqueKey: string;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly status: 'pending' | 'claimed' | 'done' | 'canceled';
  readonly claimedBy: string | null;
  readonly leaseUntil: Date | null;
  readonly attempts: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** What a caller supplies to schedule work. */
export interface NewDueWork {
  readonly siteId: number;
  readonly kind: DueWorkKind;
  readonly subjectId: number;
  readonly dueAt: Date;
  readonly uniqueKey: string;
  readonly payload?: Readonly<Record<string, unknown>>;
}

/** Arguments of a claim of due work by one worker. */
export interface ClaimDueWork {
  /** Claim only rows with `dueAt <= until`. */
  readonly until: Date;
  /** At most this many rows. */
  readonly limit: number;
  /** Worker identity written to `claimedBy`. */
  readonly owner: string;
  /** The claim lapses at this instant; a lapsed claim may be taken by another worker. */
  readonly leaseUntil: Date;
  /** The current instant, to decide which leases have lapsed. */
  readonly now: Date;
  /** Restrict to these kinds (all when omitted). */
  readonly kinds?: readonly DueWorkKind[];
  /** Restrict to one site (all sites when omitted). */
  readonly siteId?: number;
  /** Restrict to one subject (requires `siteId`): to run one subscription's work right away. */
  readonly subjectId?: number;
}

/** An event in the transactional outbox. Written in the same transaction as the change that caused it. */
export interface OutboxEventRecord {
  readonly id: number;
  readonly siteId: number;
  /** Event key, e.g. `subscription_state_change`. */
  readonly key: string;
  readonly subjectType: string;
  readonly subjectId: number;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly occurredAt: Date;
}

/** An event to append. */
export type NewOutboxEvent = Omit<OutboxEventRecord, 'id'>;

/** Scheduled work: renewals, retries, expirations, deliveries. */
export interface DueWorkRepository {
  /**
   * Schedules work unless the site already has a row with this `uniqueKey` (in any status);
   * returns the new row, or undefined when the key existed.
   */
  schedule(work: NewDueWork): Promise<DueWorkRecord | undefined>;
  /**
   * Schedules each of `works` as {@link schedule} does (a taken key is skipped), in one statement
   * on SQL: a renewal schedules the next period and its notice together (issue 18).
   */
  scheduleAll(works: readonly NewDueWork[]): Promise<void>;
  /** The row with this unique key, or undefined. */
  findByKey(siteId: number, uniqueKey: string): Promise<DueWorkRecord | undefined>;
  /** Pending or claimed rows about one subject, by due time. */
  pendingFor(siteId: number, subjectId: number, kinds?: readonly DueWorkKind[]): Promise<DueWorkRecord[]>;
  /**
   * Claims up to `limit` rows that are due and either pending or claimed under a lapsed lease,
   * in `(dueAt, id)` order, marking them claimed by `owner` until `leaseUntil`. A row of
   * {@link SUBSCRIPTION_WORK_KINDS} is passed over while an earlier open row of those kinds exists
   * for its subject (one claimable row per subscription at a time, the earliest).
   * Race-safe: concurrent claimers never receive the same row while its lease holds.
   */
  claim(args: ClaimDueWork): Promise<DueWorkRecord[]>;
  /** Marks a claimed row done, only if `owner` still holds it; returns whether it did. */
  complete(siteId: number, id: number, owner: string, now: Date): Promise<boolean>;
  /** Returns a claimed row to pending at `dueAt` with `attempts` incremented, only if `owner` holds it. */
  release(siteId: number, id: number, owner: string, dueAt: Date, now: Date): Promise<boolean>;
  /**
   * Moves the lease of the given rows that `owner` still holds to `leaseUntil` (a worker keeps its
   * claims alive while a slow gateway holds them); returns how many it extended.
   */
  extendLeases(
    rows: readonly { readonly siteId: number; readonly id: number }[],
    owner: string,
    leaseUntil: Date,
    now: Date,
  ): Promise<number>;
  /** Cancels pending or claimed rows about one subject (all kinds, or the given ones); returns how many. */
  cancelFor(siteId: number, subjectId: number, kinds: readonly DueWorkKind[] | undefined, now: Date): Promise<number>;
  /** The earliest `dueAt` of pending rows, or undefined. */
  nextDueAt(siteId?: number): Promise<Date | undefined>;
  /**
   * How many open (pending or claimed) rows are due at or before `until`, of `kinds` when given,
   * of one site when given: the size of a backlog, for progress reports.
   */
  countDue(args: { until: Date; kinds?: readonly DueWorkKind[]; siteId?: number }): Promise<number>;
}

/** The transactional outbox of events. */
export interface OutboxRepository {
  /** Appends events in order and returns them with ids, which increase with insertion order. */
  append(events: readonly NewOutboxEvent[]): Promise<OutboxEventRecord[]>;
  /** The site's events with id greater than `afterId`, by id, at most `limit`. */
  listAfter(siteId: number, afterId: number, limit: number): Promise<OutboxEventRecord[]>;
  /** One event, or undefined. */
  findById(siteId: number, id: number): Promise<OutboxEventRecord | undefined>;
  /** One page of the site's events matching `query`, by id in its direction (the events API). */
  search(siteId: number, query: OutboxQuery): Promise<OutboxEventRecord[]>;
  /** How many of the site's events match `filter`. */
  count(siteId: number, filter: OutboxFilter): Promise<number>;
}

/** Which outbox events a search keeps; every bound is inclusive and every given condition must hold. */
export interface OutboxFilter {
  readonly sinceId?: number;
  readonly maxId?: number;
  /** Only events of these keys; an empty list matches nothing. */
  readonly keys?: readonly string[];
  /** Only events about this subject. */
  readonly subject?: { readonly type: string; readonly id: number };
  readonly occurredFrom?: Date;
  readonly occurredUntil?: Date;
}

/** A page of an outbox search: the filter, the id order and the rows to skip and take. */
export interface OutboxQuery extends OutboxFilter {
  readonly direction: 'asc' | 'desc';
  readonly offset: number;
  readonly limit: number;
}
