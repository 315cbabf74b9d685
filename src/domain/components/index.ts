/**
 * Component rules that are not pricing (pricing lives in `catalog/component-pricing.ts`): what an
 * allocation change charges or credits, and the classic proration scheme names.
 */
export {
  type AllocationChange,
  type AllocationChangeInput,
  allocationChange,
  PRORATION_MODES,
  type ProrationMode,
} from './allocation-change.js';
export {
  DOWNGRADE_SCHEMES,
  type DowngradeScheme,
  downgradeScheme,
  UPGRADE_SCHEMES,
  type UpgradeScheme,
  upgradeScheme,
} from './proration-scheme.js';
