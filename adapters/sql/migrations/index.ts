/**
 * The ordered list of schema migrations. Adding one is a new `NNNN-name.ts` file plus one line
 * here; `migrate()` applies those not yet recorded in `billing_migrations`, in this order.
 */
import { foundationMigration } from './0001-foundation.js';
import { billingRecordsMigration } from './0002-billing-records.js';
import { catalogExtrasMigration } from './0003-catalog-extras.js';
import { subscriptionComponentsMigration } from './0004-subscription-components.js';
import { deliveriesMigration } from './0005-deliveries.js';
import { directPostClaimsMigration } from './0006-direct-post-claims.js';
import { invoicesMigration } from './0007-invoices.js';
import { draftInvoicesMigration } from './0008-draft-invoices.js';
import { pricePointsMigration } from './0009-price-points.js';
import { subscriptionReferencesMigration } from './0010-subscription-references.js';
import { siteExtrasMigration } from './0011-site-extras.js';
import { accountsExportsMigration } from './0012-accounts-exports.js';
import { throughputMigration } from './0013-throughput.js';
import { componentPricePointsMigration } from './0014-component-price-points.js';
import { collectionMethodsMigration } from './0015-collection-methods.js';
import { proformaInvoicesMigration } from './0016-proforma-invoices.js';
import { portalAccessMigration } from './0019-portal-access.js';
import { customPricesMigration } from './0020-custom-prices.js';
import { offersMigration } from './0021-offers.js';
import { mrrMovementsMigration } from './0022-mrr-movements.js';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';

/** Every migration, by increasing id. */
export const MIGRATIONS: readonly Migration[] = [
  foundationMigration,
  billingRecordsMigration,
  catalogExtrasMigration,
  subscriptionComponentsMigration,
  deliveriesMigration,
  directPostClaimsMigration,
  invoicesMigration,
  draftInvoicesMigration,
  pricePointsMigration,
  subscriptionReferencesMigration,
  siteExtrasMigration,
  accountsExportsMigration,
  throughputMigration,
  componentPricePointsMigration,
  collectionMethodsMigration,
  proformaInvoicesMigration,
  portalAccessMigration,
  customPricesMigration,
  offersMigration,
  mrrMovementsMigration,
];
