import mitt, { type Emitter } from 'mitt';
import { systemClock } from './clock.js';
import type { BillingEventMap, EventKey } from './events.js';
import { withDocumentEvents, withPaymentInvoice } from './invoices/document-events.js';
import { bindInvoices, InvoiceService } from './invoices/invoice-service.js';
import type { InvoicesApi } from './invoices/model.js';
import { PROFORMA_METHODS, ProformaInvoiceService } from './invoices/proforma-service.js';
import { refusingLiveSitePayments } from './live-site-guard.js';
import type { Clock } from './ports/clock.js';
import type { PaymentGateway } from './ports/gateway.js';
import type { MailOptions } from './ports/mailer.js';
import type { SiteRecord, Storage } from './ports/storage.js';
import { ACCOUNT_METHODS, AccountService } from './services/account-service.js';
import { ADVANCE_INVOICE_METHODS, AdvanceInvoiceService } from './services/advance-invoice-service.js';
import { AllocationService, isAllocationReconciliation } from './services/allocation-service.js';
import { CATALOG_METHODS, CatalogService } from './services/catalog-service.js';
import { COMPONENT_METHODS, ComponentService } from './services/component-service.js';
import { COUPON_METHODS, CouponService } from './services/coupon-service.js';
import { CUSTOMER_METHODS, CustomerService } from './services/customer-service.js';
import { DirectPostService } from './services/direct-post-service.js';
import { EventService } from './services/event-service.js';
import { EXPORT_METHODS, ExportService } from './services/export-service.js';
import { LEDGER_METHODS, LedgerService } from './services/ledger-service.js';
import { LIFECYCLE_METHODS, LifecycleService } from './services/lifecycle-service.js';
import { type DeliverMailOptions, type MailDeliverySummary, MailService } from './services/mail-service.js';
import { METAFIELD_METHODS, MetafieldService } from './services/metafield-service.js';
import { MIGRATION_METHODS, MigrationService } from './services/migration-service.js';
import { NoteService } from './services/note-service.js';
import { OFFER_METHODS, OfferService } from './services/offer-service.js';
import { PAYMENT_PROFILE_METHODS, PaymentProfileService } from './services/payment-profile-service.js';
import { PORTAL_ACCESS_METHODS, PortalAccessService } from './services/portal-access-service.js';
import { isPrepaidReplenishment, PREPAID_METHODS, PrepaidService } from './services/prepaid-service.js';
import { type PreviewResult, previewCommand } from './services/preview.js';
import { PRICE_POINT_METHODS, PricePointService } from './services/price-point-service.js';
import { REASON_CODE_METHODS, ReasonCodeService } from './services/reason-code-service.js';
import { ReferralService } from './services/referral-service.js';
import { RenewalService, type RunDueOptions, type RunDueSummary } from './services/renewal-service.js';
import { REPORT_METHODS, ReportService } from './services/report-service.js';
import { SiteService } from './services/site-service.js';
import { SUBSCRIPTION_ADMIN_METHODS, SubscriptionAdminService } from './services/subscription-admin-service.js';
import { SUBSCRIPTION_COUPON_METHODS, SubscriptionCouponService } from './services/subscription-coupon-service.js';
import { SUBSCRIPTION_METHODS, type SubscriptionDeps, SubscriptionService } from './services/subscription-service.js';
import {
  type DeliverDueOptions,
  type DeliverySummary,
  WEBHOOK_METHODS,
  WebhookService,
  type WebhookServiceOptions,
} from './services/webhook-service.js';
import { createTestGateway } from './test-gateway.js';

/** Options of {@link createBillingEngine}. */
export interface BillingEngineOptions {
  /** Where the engine keeps its data: memory, SQLite or Postgres adapter, or your own. */
  readonly storage: Storage;
  /** The engine's only source of time; default the system clock. Use a ManualClock to simulate. */
  readonly clock?: Clock;
  /**
   * The payment gateway. Required for live sites: without it, test sites use the built-in test
   * gateway and any payment on a live site is refused (`gateway_error`) before the gateway is called.
   */
  readonly gateway?: PaymentGateway;
  /**
   * Webhook delivery: local receivers (loopback on any port, for development and tests only;
   * never for live sites), output spellings, timeouts and the retry schedule.
   */
  readonly webhooks?: WebhookServiceOptions;
  /**
   * Email: the mailer and the public origin of each site's pages (for links in messages). Without
   * it, commands that would send mail (sending an invoice, a card-update request, a portal
   * invitation) are refused with a 422 ("This site has no mailer configured.") and change nothing.
   */
  readonly mail?: MailOptions;
}

/**
 * The methods `K` of a service whose first parameter is the site's subdomain, with that parameter
 * bound: what a site handle exposes. The service's own signature is the single source of truth.
 */
export type Bound<S, K extends keyof S> = {
  readonly [P in K]: S[P] extends (subdomain: string, ...args: infer A) => infer R ? (...args: A) => R : never;
};

function bind<S extends object, K extends keyof S>(service: S, subdomain: string, keys: readonly K[]): Bound<S, K> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const method = service[key] as unknown as (subdomain: string, ...args: unknown[]) => unknown;
    out[key as string] = (...args: unknown[]) => method.call(service, subdomain, ...args);
  }
  return out as Bound<S, K>;
}

const NOTES = ['create', 'list', 'get', 'update', 'delete'] as const;
const EVENTS = ['list', 'listForSubscription', 'count'] as const;
const ALLOCATIONS = [
  'allocate',
  'allocateMany',
  'previewAllocation',
  'listAllocations',
  'recordUsage',
  'listUsages',
  'listComponents',
] as const;

/**
 * A handle on one site: every operation through it is confined to that site's records, so code
 * holding it cannot reach another tenant's data by id.
 */
export interface SiteHandle {
  readonly subdomain: string;
  /** The site's current record. */
  info(): Promise<SiteRecord>;
  /** Product families and versioned products. */
  readonly catalog: Bound<CatalogService, (typeof CATALOG_METHODS)[number]>;
  /** Components with pricing schemes, versioned by price. */
  readonly components: Bound<ComponentService, (typeof COMPONENT_METHODS)[number]>;
  readonly coupons: Bound<CouponService, (typeof COUPON_METHODS)[number]>;
  /** Custom fields of customers and subscriptions, and their values. */
  readonly metafields: Bound<MetafieldService, (typeof METAFIELD_METHODS)[number]>;
  readonly customers: Bound<CustomerService, (typeof CUSTOMER_METHODS)[number]>;
  /** Payment profiles: create, list, read, update, delete, a subscription's default. */
  readonly paymentProfiles: {
    update: Bound<SubscriptionService, 'updatePaymentProfile'>['updatePaymentProfile'];
  } & Bound<PaymentProfileService, (typeof PAYMENT_PROFILE_METHODS)[number]>;
  /** Price points of products and components. */
  readonly pricePoints: Bound<PricePointService, (typeof PRICE_POINT_METHODS)[number]>;
  /** Churn reason codes. */
  readonly reasonCodes: Bound<ReasonCodeService, (typeof REASON_CODE_METHODS)[number]>;
  /** Offers: a product, components and coupons packaged for signups (`offer_id`). */
  readonly offers: Bound<OfferService, (typeof OFFER_METHODS)[number]>;
  /** Prepayments, service credits and account balances of subscriptions. */
  readonly accounts: Bound<AccountService, (typeof ACCOUNT_METHODS)[number]>;
  /** Prepaid subscriptions' configurations (their balances are the prepayment account's). */
  readonly prepaid: Bound<PrepaidService, (typeof PREPAID_METHODS)[number]>;
  /** Asynchronous CSV exports. */
  readonly exports: Bound<ExportService, (typeof EXPORT_METHODS)[number]>;
  /** Site statistics, MRR and site-wide lists of subscription data. */
  readonly reports: Bound<ReportService, (typeof REPORT_METHODS)[number]>;
  /** Signup, reads, lifecycle, product changes and migrations. */
  readonly subscriptions: Bound<SubscriptionService, (typeof SUBSCRIPTION_METHODS)[number]> &
    Bound<LifecycleService, (typeof LIFECYCLE_METHODS)[number]> &
    Bound<MigrationService, (typeof MIGRATION_METHODS)[number]> &
    Bound<SubscriptionCouponService, (typeof SUBSCRIPTION_COUPON_METHODS)[number]> &
    Bound<SubscriptionAdminService, (typeof SUBSCRIPTION_ADMIN_METHODS)[number]> & {
      previewMigration: Bound<MigrationService, 'preview'>['preview'];
    };
  /** One-time charges, adjustments, credits, external payments, refunds and the transaction list. */
  readonly ledger: Bound<LedgerService, (typeof LEDGER_METHODS)[number]>;
  readonly notes: Bound<NoteService, (typeof NOTES)[number]>;
  /** Component allocations (with proration and payment), metered usage, and a subscription's components. */
  readonly allocations: Bound<AllocationService, (typeof ALLOCATIONS)[number]>;
  readonly referrals: Bound<ReferralService, 'validate'>;
  /** Webhook endpoints, the webhook list, test messages and replays. */
  readonly webhooks: Bound<WebhookService, (typeof WEBHOOK_METHODS)[number]>;
  /** Invoices, credit notes and statements built from the ledger. */
  readonly invoices: InvoicesApi;
  /** Advance invoices: a subscription's next period invoiced before its renewal (issue, read, void). */
  readonly advanceInvoices: Bound<AdvanceInvoiceService, (typeof ADVANCE_INVOICE_METHODS)[number]>;
  /** Proforma invoices: a subscription's next renewal or a signup's bill, shown without billing it. */
  readonly proformaInvoices: Bound<ProformaInvoiceService, (typeof PROFORMA_METHODS)[number]>;
  /** Polling the site's events (the outbox): lists, a subscription's events and counts. */
  readonly events: Bound<EventService, (typeof EVENTS)[number]>;
  /** Email queued for delivery by `runDue`: an invoice, a card-update request (needs the `mail` option). */
  readonly mail: Bound<MailService, 'sendInvoice' | 'requestPaymentUpdate'>;
  /** Customers' billing-portal access: enable (with an invitation), resend, revoke. */
  readonly portalAccess: Bound<PortalAccessService, (typeof PORTAL_ACCESS_METHODS)[number]>;
}

/** The billing engine: sites, their site-scoped handles, due work and in-process events. */
export interface BillingEngine {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly gateway: PaymentGateway;
  /** Site management and credentials. */
  readonly sites: SiteService;
  /**
   * The direct-post interface (signed form signups and card updates, call records). The site
   * comes from the `api_id` of each post, not from a handle.
   */
  readonly direct: DirectPostService;
  /** A handle scoped to one site (not checked until used). */
  site(subdomain: string): SiteHandle;
  /** A handle on the site whose API key this is; throws `unauthorized` otherwise. */
  authenticate(subdomain: string, apiKey: string): Promise<SiteHandle>;
  /**
   * Runs `command` on a site handle and returns what it would do (ledger lines, events, charges)
   * without keeping anything: it runs in one transaction that is rolled back, against a simulated
   * gateway that approves every charge. Errors the command throws are thrown as they would be.
   */
  preview<T>(subdomain: string, command: (site: SiteHandle) => Promise<T>): Promise<PreviewResult<T>>;
  /** Processes all due work (renewals, retries, notices, ...) up to `until` (default now), in due order. */
  runDue(options?: RunDueOptions): Promise<RunDueSummary>;
  /** How many items `runDue` would find due up to `until` (default now): for progress reports. */
  countDue(options?: Pick<RunDueOptions, 'until' | 'siteId'>): Promise<number>;
  /**
   * Sends the webhooks that are due (first attempts and retries) to the site's endpoints, each
   * delivery claimed so that concurrent workers never send one twice at once.
   */
  deliverWebhooks(options?: DeliverDueOptions): Promise<DeliverySummary>;
  /**
   * Sends the mail that is due (first attempts and retries) through the `mail` option's mailer;
   * `runDue` does it too, after the rest of the due work. Nothing without a mailer.
   */
  deliverMail(options?: DeliverMailOptions): Promise<MailDeliverySummary>;
  /** Listens to committed events of one key, or `*` for all. Returns a function that stops listening. */
  on<K extends EventKey>(key: K | '*', listener: (event: BillingEventMap[K]) => void): () => void;
  /** Creates or upgrades the storage schema. */
  migrate(): Promise<void>;
  /** Closes the storage. */
  close(): Promise<void>;
}

/** How many site handles an engine keeps for reuse (see `createBillingEngine`). */
const MAX_CACHED_HANDLES = 1000;

/** Freezes a handle and its groups of methods, so that a shared handle cannot be changed by one user. */
function freezeHandle(handle: SiteHandle): SiteHandle {
  for (const value of Object.values(handle)) if (typeof value === 'object' && value !== null) Object.freeze(value);
  return Object.freeze(handle);
}

/** Creates a billing engine over a storage, a clock and a payment gateway. */
export function createBillingEngine(options: BillingEngineOptions): BillingEngine {
  const storage = options.storage;
  // No gateway given: the test gateway serves test sites, and payments on live sites are refused.
  const commandStorage = options.gateway === undefined ? refusingLiveSitePayments(storage) : storage;
  const clock = options.clock ?? systemClock;
  const gateway = options.gateway ?? createTestGateway();
  const emitter: Emitter<BillingEventMap> = mitt<BillingEventMap>();
  // Late-bound: the webhook service needs the deps, and the deps fan events out to it.
  let webhooks: WebhookService | undefined;
  const deps: SubscriptionDeps = {
    // Invoice events raised inside `post()` are flushed with each transaction (invoices/document-events.ts).
    storage: withDocumentEvents(commandStorage, {
      fanOut: (tx, events, now) => webhooks!.fanOut(tx, events, now),
      emit: (key, event) => deps.emitter.emit(key, event),
    }),
    clock,
    gateway,
    onEvents: (tx, events, now) => webhooks!.fanOut(tx, events, now, withPaymentInvoice),
    emitter: {
      emit(key, event) {
        // A throwing listener must not turn a committed command into a reported failure.
        try {
          emitter.emit(key, event);
        } catch (error) {
          queueMicrotask(() => {
            throw error;
          });
        }
      },
    },
  };
  const sites = new SiteService(deps);
  const catalog = new CatalogService(deps);
  const components = new ComponentService(deps);
  const coupons = new CouponService(deps);
  const metafields = new MetafieldService(deps);
  const customers = new CustomerService(deps);
  const subscriptions = new SubscriptionService(deps);
  const ledger = new LedgerService(deps);
  const invoices = new InvoiceService(deps, ledger);
  const advanceInvoices = new AdvanceInvoiceService(deps);
  const notes = new NoteService(deps);
  const paymentProfiles = new PaymentProfileService(deps);
  const pricePoints = new PricePointService(deps);
  const reasonCodes = new ReasonCodeService(deps);
  const offers = new OfferService(deps);
  const accounts = new AccountService(deps);
  const prepaid = new PrepaidService(deps);
  const exportService = new ExportService(deps);
  const reports = new ReportService(deps);
  // Signup previews charge nothing (a simulated gateway), so they run on the storage without the
  // live-site payment guard: a live site can be priced by an engine that has no gateway.
  const subscriptionAdmin = new SubscriptionAdminService(deps, { previewStorage: storage });
  // Signup proformas run the signup the same way (rolled back, simulated gateway).
  const proformaInvoices = new ProformaInvoiceService(deps, { previewStorage: storage });
  const events = new EventService(deps);
  const referrals = new ReferralService(deps);
  const allocations = new AllocationService(deps);
  // Allocation payments and prepaid replenishments carry their own plans; every other one is the ledger's.
  const renewals = new RenewalService(deps, {
    reconcile: (work) =>
      isPrepaidReplenishment(work.payload)
        ? prepaid.replenish(work)
        : isAllocationReconciliation(work.payload)
          ? allocations.reconcile(work)
          : ledger.reconcile(work),
  });
  const lifecycle = new LifecycleService(deps, renewals);
  const migrations = new MigrationService(deps);
  const subscriptionCoupons = new SubscriptionCouponService(deps);
  const direct = new DirectPostService(deps, subscriptions);
  webhooks = new WebhookService(deps, options.webhooks);
  const mail = new MailService(deps, options.mail, async (subdomain, uid) => ({
    pdf: (await invoices.render(subdomain, uid, 'pdf')) as Uint8Array,
    html: (await invoices.render(subdomain, uid, 'html')) as string,
  }));
  const portalAccess = new PortalAccessService(deps, mail);
  const webhookService = webhooks;

  // Handles hold nothing but bound methods (every call reads the site afresh), so one per
  // subdomain serves every request: building one binds about ninety methods. They are frozen,
  // since they are shared. Subdomains may come from client input, so the map is capped and past
  // the cap handles are built per call instead.
  const handles = new Map<string, SiteHandle>();
  const handle = (name: string): SiteHandle => {
    const subdomain = name.toLowerCase();
    let made = handles.get(subdomain);
    if (made === undefined) {
      made = freezeHandle(buildHandle(subdomain));
      if (handles.size < MAX_CACHED_HANDLES) handles.set(subdomain, made);
    }
    return made;
  };
  const buildHandle = (subdomain: string): SiteHandle => {
    return {
      subdomain,
      info: () => sites.get(subdomain),
      catalog: bind(catalog, subdomain, CATALOG_METHODS),
      components: bind(components, subdomain, COMPONENT_METHODS),
      coupons: bind(coupons, subdomain, COUPON_METHODS),
      metafields: bind(metafields, subdomain, METAFIELD_METHODS),
      customers: bind(customers, subdomain, CUSTOMER_METHODS),
      paymentProfiles: {
        update: bind(subscriptions, subdomain, ['updatePaymentProfile']).updatePaymentProfile,
        ...bind(paymentProfiles, subdomain, PAYMENT_PROFILE_METHODS),
      },
      pricePoints: bind(pricePoints, subdomain, PRICE_POINT_METHODS),
      reasonCodes: bind(reasonCodes, subdomain, REASON_CODE_METHODS),
      offers: bind(offers, subdomain, OFFER_METHODS),
      accounts: bind(accounts, subdomain, ACCOUNT_METHODS),
      prepaid: bind(prepaid, subdomain, PREPAID_METHODS),
      exports: bind(exportService, subdomain, EXPORT_METHODS),
      reports: bind(reports, subdomain, REPORT_METHODS),
      subscriptions: {
        ...bind(subscriptions, subdomain, SUBSCRIPTION_METHODS),
        ...bind(lifecycle, subdomain, LIFECYCLE_METHODS),
        ...bind(migrations, subdomain, MIGRATION_METHODS),
        ...bind(subscriptionCoupons, subdomain, SUBSCRIPTION_COUPON_METHODS),
        ...bind(subscriptionAdmin, subdomain, SUBSCRIPTION_ADMIN_METHODS),
        previewMigration: bind(migrations, subdomain, ['preview']).preview,
      },
      ledger: bind(ledger, subdomain, LEDGER_METHODS),
      notes: bind(notes, subdomain, NOTES),
      allocations: bind(allocations, subdomain, ALLOCATIONS),
      referrals: bind(referrals, subdomain, ['validate']),
      webhooks: bind(webhookService, subdomain, WEBHOOK_METHODS),
      invoices: bindInvoices(invoices, subdomain),
      advanceInvoices: bind(advanceInvoices, subdomain, ADVANCE_INVOICE_METHODS),
      proformaInvoices: bind(proformaInvoices, subdomain, PROFORMA_METHODS),
      events: bind(events, subdomain, EVENTS),
      mail: bind(mail, subdomain, ['sendInvoice', 'requestPaymentUpdate']),
      portalAccess: bind(portalAccess, subdomain, PORTAL_ACCESS_METHODS),
    };
  };

  return {
    storage,
    clock,
    gateway,
    sites,
    direct,
    site: handle,
    async authenticate(subdomain, apiKey) {
      const site = await sites.authenticate(subdomain, apiKey);
      return handle(site.subdomain);
    },
    // Mail goes after the rest of the due work, in the same call (not for one subject's work).
    runDue: async (runOptions) => {
      const summary = await renewals.runDue(runOptions);
      const left = runOptions?.limit === undefined ? undefined : runOptions.limit - summary.processed;
      if (runOptions?.subjectId !== undefined || (left !== undefined && left <= 0)) return summary;
      const { processed } = await mail.deliverDue({
        ...(runOptions?.until === undefined ? {} : { until: runOptions.until }),
        ...(left === undefined ? {} : { limit: left }),
        ...(runOptions?.siteId === undefined ? {} : { siteId: runOptions.siteId }),
      });
      return processed === 0 ? summary : { ...summary, processed: summary.processed + processed };
    },
    countDue: async (countOptions) => (await renewals.countDue(countOptions)) + (await mail.countDue(countOptions)),
    deliverMail: (mailOptions) => mail.deliverDue(mailOptions),
    deliverWebhooks: (deliverOptions) => webhookService.deliverDue(deliverOptions),
    preview: (subdomain, command) =>
      previewCommand(
        storage,
        (inner, simulated) => createBillingEngine({ storage: inner, clock, gateway: simulated }),
        (engine) => command(engine.site(subdomain)),
      ),
    on(key, listener) {
      if (key === '*') {
        const wildcard = (_type: EventKey, event: BillingEventMap[EventKey]) => listener(event as never);
        emitter.on('*', wildcard);
        return () => emitter.off('*', wildcard);
      }
      emitter.on(key, listener as (event: BillingEventMap[EventKey]) => void);
      return () => emitter.off(key, listener as (event: BillingEventMap[EventKey]) => void);
    },
    migrate: () => storage.migrate(),
    close: () => storage.close(),
  };
}
