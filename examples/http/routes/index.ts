import type { BillingEngine } from 'billing-engine';
import type { Hono } from 'hono';
import type { HttpAppEnv } from '../http-context.js';
import { registerCatalogRoutes } from './catalog-routes.js';
import { registerCustomerRoutes } from './customer-routes.js';
import { registerLifecycleRoutes } from './lifecycle-routes.js';
import { registerPaymentProfileRoutes } from './payment-profile-routes.js';
import { registerSiteRoutes } from './site-routes.js';
import { registerSubscriptionRoutes } from './subscription-routes.js';

/** Registers every main-API route (the site-scoped JSON API) on the app. */
export function registerApiRoutes(app: Hono<HttpAppEnv>, engine: BillingEngine): void {
  registerCatalogRoutes(app);
  registerCustomerRoutes(app);
  registerSubscriptionRoutes(app);
  registerLifecycleRoutes(app);
  registerPaymentProfileRoutes(app);
  registerSiteRoutes(app, engine);
}
