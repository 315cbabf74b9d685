/**
 * billing-engine: an embeddable subscription billing engine. The root is the engine itself: the
 * engine factory, the storage, clock and gateway ports, the records they carry, the errors, and
 * domain helpers (prices, discounts, the subscription state machine, portal links, the test
 * gateway). The Chargify-compatible wire format is `billing-engine/chargify`, the mountable HTTP
 * binding `billing-engine/http`, storages `billing-engine/adapters/*` and the conformance kit
 * `billing-engine/testing`. Nothing here imports an HTTP framework, a CLI library or a driver.
 */

export { ManualClock, systemClock } from './clock.js';
export { componentPrice, parseComponentPricing, validateBrackets } from './domain/catalog/component-pricing.js';
export { computeDiscount } from './domain/catalog/coupon-discount.js';
export type { ProrationMode } from './domain/components/index.js';
export { toMajorString } from './domain/money/index.js';
export {
  isAllowedMove,
  LIFECYCLE_EVENTS,
  LIVE_STATES,
  type LifecycleEvent,
  nextState,
  transition,
} from './domain/subscription/state-machine.js';
export {
  type BillingEngine,
  type BillingEngineOptions,
  type Bound,
  createBillingEngine,
  type SiteHandle,
} from './engine.js';
export * from './errors.js';
export { type BillingEvent, type BillingEventMap, EVENT_KEYS, type EventKey } from './events.js';
export { LIVE_SITE_NEEDS_GATEWAY_MESSAGE, refusingLiveSitePayments } from './live-site-guard.js';
export * from './portal-link.js';
export type { Clock } from './ports/clock.js';
export type * from './ports/gateway.js';
export type * from './ports/mailer.js';
export type * from './ports/storage.js';
export { SUBSCRIPTION_WORK_KINDS } from './ports/storage.js';
export type {
  AllocationEffect,
  AllocationInput,
  AllocationPayment,
  AllocationPreview,
  AllocationResult,
  BulkAllocationInput,
  BulkAllocationResult,
  SubscriptionComponentView,
  UsageInput,
  UsageResult,
} from './services/allocation-service.js';
export { type BillingManifest, type ManifestLineItem, nextBillingManifest } from './services/billing-manifest.js';
export type {
  CatalogCopySummary,
  FamilyInput,
  FamilyUpdateInput,
  ListProductsOptions,
  ProductInput,
  ProductView,
} from './services/catalog-service.js';
export type { SignupComponentInput } from './services/component-billing.js';
export type {
  ComponentInput,
  ComponentKindInput,
  ComponentPriceQuote,
  ComponentUpdateInput,
  ComponentView,
  ListComponentsOptions,
} from './services/component-service.js';
export {
  COUPON_NOT_FOUND,
  type CouponInput,
  type CouponValidateOptions,
  type ListCouponsOptions,
} from './services/coupon-service.js';
export type { CustomerInput } from './services/customer-service.js';
export {
  type DirectBasicCredentials,
  type DirectPostForm,
  type DirectPostOptions,
  type DirectPostResult,
  DirectPostService,
} from './services/direct-post-service.js';
export type {
  AdjustmentInput,
  AmountFields,
  ChargeInput,
  CreditInput,
  RefundInput,
  TransactionListInput,
} from './services/ledger-service.js';
export type { CancelInput, CancellationMethod, HoldInput, ReactivateInput } from './services/lifecycle-service.js';
export {
  type DeliverMailOptions,
  isMailAddress,
  type MailDeliverySummary,
  NO_MAILER_MESSAGE,
  type QueuedMail,
  type SendInvoiceInput,
} from './services/mail-service.js';
export type {
  MetadataInput,
  MetafieldInput,
  MetafieldResourceInput,
  MetafieldScopeInput,
  ScopeFlagInput,
} from './services/metafield-service.js';
export type { MigrationInput, MigrationPreview, ProductChangeInput } from './services/migration-service.js';
export type { NoteInput, NoteUpdateInput } from './services/note-service.js';
export {
  type CustomerPortalAccess,
  type EnablePortalOptions,
  PORTAL_NOT_ENABLED_MESSAGE,
} from './services/portal-access-service.js';
export type { PreviewResult } from './services/preview.js';
export { generateReferralCode, type ReferralRecord } from './services/referral-service.js';
export type { RunDueOptions, RunDueSummary } from './services/renewal-service.js';
export { addRunDueSummaries, NO_DUE_WORK } from './services/renewal-service.js';
export {
  type ApiKeySummary,
  type CreatedSite,
  type CreateSiteInput,
  DEFAULT_SITE_SETTINGS,
  type IssuedDirectCredentials,
  SiteService,
  type SiteSettingsInput,
  type UpdateSiteInput,
} from './services/site-service.js';
export type {
  PurgeInput,
  PurgeResult,
  SignupManifest,
  SignupManifestLineItem,
  SignupPreview,
  SubscriptionAdminOptions,
} from './services/subscription-admin-service.js';
export type {
  CreateSubscriptionInput,
  CreditCardInput,
  SubscriptionListQuery,
  SubscriptionView,
} from './services/subscription-service.js';
export type {
  DeliverDueOptions,
  DeliverySummary,
  WebhookEndpointInput,
  WebhookListQuery,
  WebhookServiceOptions,
  WebhookView,
} from './services/webhook-service.js';
export {
  type ChargeCall,
  createTestGateway,
  type GatewayFault,
  type GatewayFaults,
  type InjectedFailure,
  luhnValid,
  type TestGateway,
  type TestGatewayOptions,
} from './test-gateway.js';
