import type { BillingEngine } from 'billing-engine';
import type { Hono } from 'hono';
import type { HttpAppEnv } from '../http-context.js';
import { registerAccountRoutes } from './account-routes.js';
import { registerAdvanceInvoiceRoutes } from './advance-invoice-routes.js';
import { registerAllocationRoutes } from './allocation-routes.js';
import { registerBillingPortalRoutes } from './billing-portal-routes.js';
import { registerCallRoutes } from './call-routes.js';
import { registerCatalogRoutes } from './catalog-routes.js';
import { registerComponentRoutes } from './component-routes.js';
import { registerCouponRoutes } from './coupon-routes.js';
import { registerCustomerRoutes } from './customer-routes.js';
import { registerEventRoutes } from './event-routes.js';
import { registerInvoiceRoutes } from './invoice-routes.js';
import { registerLedgerRoutes } from './ledger-routes.js';
import { registerLifecycleRoutes } from './lifecycle-routes.js';
import { registerMetafieldRoutes } from './metafield-routes.js';
import { registerMethodNotAllowed } from './method-routes.js';
import { registerMigrationRoutes } from './migration-routes.js';
import { registerNoteRoutes } from './note-routes.js';
import { registerOfferRoutes } from './offer-routes.js';
import { registerPaymentProfileRoutes } from './payment-profile-routes.js';
import { type PortalLinkRoutesOptions, registerPortalLinkRoutes } from './portal-link-routes.js';
import { registerPrepaidRoutes } from './prepaid-routes.js';
import { registerPricePointRoutes } from './price-point-routes.js';
import { registerProductFamilyRoutes } from './product-family-routes.js';
import { registerProformaRoutes } from './proforma-routes.js';
import { registerReasonCodeRoutes } from './reason-code-routes.js';
import { registerReferralRoutes } from './referral-routes.js';
import { registerReportRoutes } from './report-routes.js';
import { registerSiteRoutes } from './site-routes.js';
import { registerSubscriptionAdminRoutes } from './subscription-admin-routes.js';
import { registerSubscriptionCouponRoutes } from './subscription-coupon-routes.js';
import { registerSubscriptionRoutes } from './subscription-routes.js';
import { registerWebhookRoutes } from './webhook-routes.js';

/** Registers every main-API route (the site-scoped JSON API) on the app. */
export function registerApiRoutes(
  app: Hono<HttpAppEnv>,
  engine: BillingEngine,
  options: { portalLinks?: PortalLinkRoutesOptions | undefined } = {},
): void {
  // First: `/customers/metafields.json` and `/subscriptions/metafields.json` also fit the
  // `/customers/{id}.json` and `/subscriptions/{id}.json` patterns, and the first route registered answers.
  registerMetafieldRoutes(app);
  // Also first: `/subscriptions/preview.json` and the `/{resource_type}/metadata.json` lists fit
  // the `{id}.json` patterns too.
  registerSubscriptionAdminRoutes(app);
  // Also first: `/subscriptions/proforma_invoices.json` fits `/subscriptions/{id}.json`.
  registerProformaRoutes(app);
  registerAdvanceInvoiceRoutes(app);
  registerReportRoutes(app);
  registerCatalogRoutes(app);
  registerProductFamilyRoutes(app);
  registerComponentRoutes(app);
  registerCouponRoutes(app);
  registerCustomerRoutes(app);
  registerSubscriptionRoutes(app);
  registerLifecycleRoutes(app);
  registerMigrationRoutes(app);
  registerLedgerRoutes(app);
  registerNoteRoutes(app);
  registerReferralRoutes(app);
  registerPaymentProfileRoutes(app);
  registerAllocationRoutes(app);
  registerWebhookRoutes(app);
  registerEventRoutes(app);
  registerInvoiceRoutes(app);
  registerPricePointRoutes(app);
  registerReasonCodeRoutes(app);
  registerOfferRoutes(app);
  registerAccountRoutes(app);
  registerPrepaidRoutes(app);
  registerSubscriptionCouponRoutes(app);
  registerCallRoutes(app, engine);
  registerSiteRoutes(app, engine);
  registerPortalLinkRoutes(app, engine, options.portalLinks);
  registerBillingPortalRoutes(app);
  // Last: a known path with a method it does not take is a 405, not a 404.
  registerMethodNotAllowed(app);
}
