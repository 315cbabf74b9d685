/** Records and repository of MRR movements (the history of each subscription's MRR). Same conventions as `storage.ts`. */

import type { PageRequest } from './page-request.js';

/**
 * Why a subscription's MRR moved, in the service's words: its first MRR (`new_business`), a rise
 * or a fall while it stays billable (`expansion`, `contraction`), leaving the billable states
 * (`churn`, to 0) and coming back after a churn (`reactivation`). A `baseline` is not a movement
 * and is never listed: it records the MRR a subscription had when its history started (a
 * subscription older than the history, or a signup with no MRR yet, such as a free trial), so that
 * the next change is measured from it.
 */
export type MrrMovementCategory = 'new_business' | 'expansion' | 'contraction' | 'churn' | 'reactivation' | 'baseline';

/** One line of a subscription's configuration when a movement was recorded: its product, or one component. */
export interface MrrMovementLineItem {
  readonly productId: number;
  /** 0 for the product's line. */
  readonly componentId: number;
  /** The price point the line is billed at, when known (null otherwise). */
  readonly pricePointId: number | null;
  /** The product's or the component's name at the time. */
  readonly name: string;
  /** The line's MRR after the movement, in minor units (a month's share; the lines of a part add up to it). */
  readonly mrrInCents: number;
  /** The line's change: `mrrInCents` less its MRR at the previous movement (signed). */
  readonly movementInCents: number;
  /** Units: 1 for the product and an on/off component, the allocation, or the period's metered usage. */
  readonly quantity: number;
  /** The line's quantity at the previous movement (0 when it had no line then). */
  readonly prevQuantity: number;
  /** True when the line counts in the plan part, false for usage (metered components). */
  readonly recurring: boolean;
}

/**
 * One change of a subscription's MRR. Amounts are minor units of the site's currency: the signed
 * change (`amountInCents = planAmountInCents + usageAmountInCents`) and the MRR it left
 * (`mrrInCents = planMrrInCents + usageMrrInCents`), which the next movement is a difference from.
 */
export interface MrrMovementRecord {
  readonly id: number;
  readonly siteId: number;
  readonly subscriptionId: number;
  /** The command's instant. */
  readonly occurredAt: Date;
  readonly category: MrrMovementCategory;
  readonly amountInCents: number;
  readonly planAmountInCents: number;
  readonly usageAmountInCents: number;
  readonly mrrInCents: number;
  readonly planMrrInCents: number;
  readonly usageMrrInCents: number;
  /** The customer's name at the time (organization when the customer has no name). */
  readonly subscriberName: string;
  /** The product first, then components by id. */
  readonly lineItems: readonly MrrMovementLineItem[];
}

/** Which movements a list returns, and in which order. */
export interface MrrMovementListFilter {
  /** Only this subscription's movements. */
  readonly subscriptionId?: number;
  /** By id (the order they were recorded in): `asc` oldest first, `desc` newest first. */
  readonly direction: 'asc' | 'desc';
}

/** MRR movements of a site's subscriptions. They go with their subscription (purge) and with the site's data (clear). */
export interface MrrMovementsRepository {
  insert(movement: Omit<MrrMovementRecord, 'id'>): Promise<MrrMovementRecord>;
  /** The subscription's latest movement (highest id), a baseline included, if any. */
  findLast(siteId: number, subscriptionId: number): Promise<MrrMovementRecord | undefined>;
  /** One page of the site's movements; baselines are never listed. */
  list(siteId: number, filter: MrrMovementListFilter, page: PageRequest): Promise<MrrMovementRecord[]>;
  /** How many movements the filter selects (baselines left out). */
  count(siteId: number, filter: MrrMovementListFilter): Promise<number>;
}
