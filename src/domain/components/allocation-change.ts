/**
 * The money of one allocation change of a quantity-based or on/off component:
 * whether it is an upgrade or a downgrade, and what is charged or credited for the rest of the
 * current period. Pure: the caller passes the costs and the instants.
 */
import { invalid } from '../../errors.js';
import { assertMinor, prorate } from '../money/index.js';

/** How an upgrade is charged or a downgrade credited: the whole difference, its prorated part, or nothing. */
export type ProrationMode = 'full' | 'prorated' | 'none';

/** Every {@link ProrationMode}, in the service's spelling (`upgrade_charge`, `downgrade_credit`). */
export const PRORATION_MODES: readonly ProrationMode[] = ['full', 'prorated', 'none'];

/** Input of {@link allocationChange}. Costs are what the whole period costs at each allocation. */
export interface AllocationChangeInput {
  /** What the previous allocation costs for a whole period, in minor units. */
  readonly previousCostInCents: number;
  /** What the new allocation costs for a whole period, in minor units. */
  readonly newCostInCents: number;
  /** The current period, half-open `[periodStart, periodEnd)`. */
  readonly periodStart: Date;
  readonly periodEnd: Date;
  /** When the change happens; outside the period it is clamped to it (before: all left; after: nothing left). */
  readonly at: Date;
  readonly upgradeCharge: ProrationMode;
  readonly downgradeCredit: ProrationMode;
}

/** Which way the cost moved, and what that gives: a charge for an upgrade, a credit for a downgrade. */
export interface AllocationChange {
  /** Decided by the cost, not the quantity: a bigger quantity in a cheaper stairstep bracket is a downgrade. */
  readonly direction: 'upgrade' | 'downgrade' | 'none';
  /** Non-negative; 0 unless the direction is `upgrade`. */
  readonly chargeInCents: number;
  /** Non-negative (the ledger line carries the sign); 0 unless the direction is `downgrade`. */
  readonly creditInCents: number;
}

/**
 * What an allocation change charges or credits. The difference of the two period costs is taken
 * whole (`full`), times the part of the period still to run (`prorated`: difference × remaining
 * ms / period ms, rounded half-up once to the minor unit), or not at all (`none`). Only the mode of
 * the direction the cost moved in applies. No minimum unit is imposed: a change at the very end of
 * the period prorates to 0, so the parts of a period split at several instants add up to the whole.
 */
export function allocationChange(input: AllocationChangeInput): AllocationChange {
  assertMinor(input.previousCostInCents, 'Previous cost');
  assertMinor(input.newCostInCents, 'New cost');
  if (input.previousCostInCents < 0 || input.newCostInCents < 0) throw invalid('Cost: must not be negative.');
  assertMode(input.upgradeCharge, 'Upgrade charge');
  assertMode(input.downgradeCredit, 'Downgrade credit');
  const start = input.periodStart.getTime();
  const end = input.periodEnd.getTime();
  if (!Number.isFinite(start) || !Number.isFinite(end) || !Number.isFinite(input.at.getTime())) {
    throw invalid('Period: must be valid instants.');
  }
  if (end <= start) throw invalid('Period: must end after it starts.');
  const remaining = Math.min(end - start, Math.max(0, end - input.at.getTime()));
  const difference = input.newCostInCents - input.previousCostInCents;
  if (difference === 0) return { direction: 'none', chargeInCents: 0, creditInCents: 0 };
  const magnitude = Math.abs(difference);
  if (difference > 0) {
    return {
      direction: 'upgrade',
      chargeInCents: part(magnitude, input.upgradeCharge, remaining, end - start),
      creditInCents: 0,
    };
  }
  return {
    direction: 'downgrade',
    chargeInCents: 0,
    creditInCents: part(magnitude, input.downgradeCredit, remaining, end - start),
  };
}

function part(amount: number, mode: ProrationMode, remaining: number, total: number): number {
  switch (mode) {
    case 'full':
      return amount;
    case 'prorated':
      return prorate(amount, remaining, total);
    case 'none':
      return 0;
  }
}

function assertMode(mode: unknown, label: string): asserts mode is ProrationMode {
  if (!PRORATION_MODES.includes(mode as ProrationMode)) {
    throw invalid(`${label}: must be one of full, prorated or none.`);
  }
}
