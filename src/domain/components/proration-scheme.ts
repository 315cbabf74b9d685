/**
 * The classic allocation proration schemes mapped onto the modern fields:
 * `proration_upgrade_scheme` gives `upgrade_charge` plus `accrue_charge`, and
 * `proration_downgrade_scheme` gives `downgrade_credit`.
 */
import { invalid } from '../../errors.js';
import type { ProrationMode } from './allocation-change.js';

/** The classic upgrade schemes, in the service's spelling. */
export type UpgradeScheme =
  | 'prorate-attempt-capture'
  | 'prorate-delay-capture'
  | 'full-price-attempt-capture'
  | 'full-price-delay-capture'
  | 'no-prorate';

/** The classic downgrade schemes, in the service's spelling. */
export type DowngradeScheme = 'prorate' | 'no-prorate';

const UPGRADE: Readonly<Record<UpgradeScheme, { upgradeCharge: ProrationMode; accrueCharge: boolean }>> = {
  'prorate-attempt-capture': { upgradeCharge: 'prorated', accrueCharge: false },
  'prorate-delay-capture': { upgradeCharge: 'prorated', accrueCharge: true },
  'full-price-attempt-capture': { upgradeCharge: 'full', accrueCharge: false },
  'full-price-delay-capture': { upgradeCharge: 'full', accrueCharge: true },
  // Nothing is charged, so there is nothing to capture or accrue; false keeps the record plain.
  'no-prorate': { upgradeCharge: 'none', accrueCharge: false },
};

const DOWNGRADE: Readonly<Record<DowngradeScheme, ProrationMode>> = {
  prorate: 'prorated',
  'no-prorate': 'none',
};

/** Every classic upgrade scheme. */
export const UPGRADE_SCHEMES = Object.keys(UPGRADE) as readonly UpgradeScheme[];

/** Every classic downgrade scheme. */
export const DOWNGRADE_SCHEMES = Object.keys(DOWNGRADE) as readonly DowngradeScheme[];

/**
 * The modern equivalent of a classic upgrade scheme: how the upgrade is charged, and whether the
 * charge accrues to the next renewal (`delay-capture`) or is collected now (`attempt-capture`).
 * An unknown name is a validation error naming the accepted ones.
 */
export function upgradeScheme(name: string): { readonly upgradeCharge: ProrationMode; readonly accrueCharge: boolean } {
  if (!Object.hasOwn(UPGRADE, name)) {
    throw invalid(
      `Proration upgrade scheme: must be one of ${UPGRADE_SCHEMES.join(', ')}.`,
      'proration_upgrade_scheme',
    );
  }
  return UPGRADE[name as UpgradeScheme];
}

/** The modern `downgrade_credit` of a classic downgrade scheme; an unknown name is a validation error. */
export function downgradeScheme(name: string): ProrationMode {
  if (!Object.hasOwn(DOWNGRADE, name)) {
    throw invalid(
      `Proration downgrade scheme: must be one of ${DOWNGRADE_SCHEMES.join(', ')}.`,
      'proration_downgrade_scheme',
    );
  }
  return DOWNGRADE[name as DowngradeScheme];
}
