import mitt, { type Emitter } from 'mitt';
import { systemClock } from './clock.js';
import type { BillingEventMap, EventKey } from './events.js';
import type { Clock } from './ports/clock.js';
import type { PaymentGateway } from './ports/gateway.js';
import type {
  AddressFields,
  CustomerRecord,
  PaymentProfileRecord,
  ProductFamilyRecord,
  SiteRecord,
  Storage,
  TransactionRecord,
} from './ports/storage.js';
import { CatalogService, type FamilyInput, type ProductInput, type ProductView } from './services/catalog-service.js';
import { type CustomerInput, CustomerService } from './services/customer-service.js';
import { type CancelInput, type HoldInput, LifecycleService, type ReactivateInput } from './services/lifecycle-service.js';
import { type MigrationInput, type MigrationPreview, MigrationService, type ProductChangeInput } from './services/migration-service.js';
import { RenewalService, type RunDueOptions, type RunDueSummary } from './services/renewal-service.js';
import { SiteService } from './services/site-service.js';
import {
  type CreateSubscriptionInput,
  type CreditCardInput,
  type SubscriptionDeps,
  type SubscriptionListQuery,
  SubscriptionService,
  type SubscriptionView,
} from './services/subscription-service.js';
import { createTestGateway } from './test-gateway.js';

/** Options of {@link createBillingEngine}. */
export interface BillingEngineOptions {
  /** Where the engine keeps its data: memory, SQLite or Postgres adapter, or your own. */
  readonly storage: Storage;
  /** The engine's only source of time; default the system clock. Use a ManualClock to simulate. */
  readonly clock?: Clock;
  /** The payment gateway; default the built-in test gateway (see the README). */
  readonly gateway?: PaymentGateway;
}

/**
 * A handle on one site: every operation through it is confined to that site's records, so code
 * holding it cannot reach another tenant's data by id.
 */
export interface SiteHandle {
  readonly subdomain: string;
  /** The site's current record. */
  info(): Promise<SiteRecord>;
  readonly catalog: {
    createFamily(input: FamilyInput): Promise<ProductFamilyRecord>;
    listFamilies(): Promise<ProductFamilyRecord[]>;
    createProduct(familyId: number, input: ProductInput): Promise<ProductView>;
    updateProduct(productId: number, input: ProductInput): Promise<ProductView>;
    getProduct(idOrHandle: number | string): Promise<ProductView>;
  };
  readonly customers: {
    create(input: CustomerInput): Promise<CustomerRecord>;
    get(id: number): Promise<CustomerRecord>;
    update(id: number, input: CustomerInput): Promise<CustomerRecord>;
    list(page?: number, perPage?: number): Promise<CustomerRecord[]>;
    delete(id: number): Promise<void>;
  };
  readonly paymentProfiles: {
    update(id: number, input: Partial<CreditCardInput> & { billingAddress?: Partial<AddressFields> }): Promise<PaymentProfileRecord>;
  };
  readonly subscriptions: {
    create(input: CreateSubscriptionInput): Promise<SubscriptionView>;
    get(id: number): Promise<SubscriptionView>;
    list(query?: SubscriptionListQuery): Promise<SubscriptionView[]>;
    transactions(id: number): Promise<TransactionRecord[]>;
    updateCard(id: number, card: CreditCardInput & { billingAddress?: Partial<AddressFields> }): Promise<SubscriptionView>;
    changeBillingDate(id: number, nextBillingAt: Date | string): Promise<SubscriptionView>;
    cancel(id: number, input?: CancelInput): Promise<SubscriptionView>;
    cancelAtEndOfPeriod(id: number, input?: Omit<CancelInput, 'cancelAtEndOfPeriod'>): Promise<SubscriptionView>;
    undoCancelAtEndOfPeriod(id: number): Promise<SubscriptionView>;
    reactivate(id: number, input?: ReactivateInput): Promise<SubscriptionView>;
    hold(id: number, input?: HoldInput): Promise<SubscriptionView>;
    resume(id: number): Promise<SubscriptionView>;
    changeProduct(id: number, input: ProductChangeInput | { delayed: true; productId: null }): Promise<SubscriptionView>;
    migrate(id: number, input: MigrationInput): Promise<SubscriptionView>;
    previewMigration(id: number, input: MigrationInput): Promise<MigrationPreview>;
  };
}

/** The billing engine: sites, their site-scoped handles, due work and in-process events. */
export interface BillingEngine {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly gateway: PaymentGateway;
  /** Site management and credentials. */
  readonly sites: SiteService;
  /** A handle scoped to one site (not checked until used). */
  site(subdomain: string): SiteHandle;
  /** A handle on the site whose API key this is; throws `unauthorized` otherwise. */
  authenticate(subdomain: string, apiKey: string): Promise<SiteHandle>;
  /** Processes all due work (renewals, ...) up to `until` (default now), in due order. */
  runDue(options?: RunDueOptions): Promise<RunDueSummary>;
  /** Listens to committed events of one key, or `*` for all. Returns a function that stops listening. */
  on<K extends EventKey>(key: K | '*', listener: (event: BillingEventMap[K]) => void): () => void;
  /** Creates or upgrades the storage schema. */
  migrate(): Promise<void>;
  /** Closes the storage. */
  close(): Promise<void>;
}

/** Creates a billing engine over a storage, a clock and a payment gateway. */
export function createBillingEngine(options: BillingEngineOptions): BillingEngine {
  const storage = options.storage;
  const clock = options.clock ?? systemClock;
  const gateway = options.gateway ?? createTestGateway();
  const emitter: Emitter<BillingEventMap> = mitt<BillingEventMap>();
  const deps: SubscriptionDeps = {
    storage,
    clock,
    gateway,
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
  const customers = new CustomerService(deps);
  const subscriptions = new SubscriptionService(deps);
  const renewals = new RenewalService(deps);
  const lifecycle = new LifecycleService(deps, renewals);
  const migrations = new MigrationService(deps);

  const handle = (name: string): SiteHandle => {
    const subdomain = name.toLowerCase();
    return {
      subdomain,
      info: () => sites.get(subdomain),
      catalog: {
        createFamily: (input) => catalog.createFamily(subdomain, input),
        listFamilies: () => catalog.listFamilies(subdomain),
        createProduct: (familyId, input) => catalog.createProduct(subdomain, familyId, input),
        updateProduct: (productId, input) => catalog.updateProduct(subdomain, productId, input),
        getProduct: (idOrHandle) => catalog.getProduct(subdomain, idOrHandle),
      },
      customers: {
        create: (input) => customers.create(subdomain, input),
        get: (id) => customers.get(subdomain, id),
        update: (id, input) => customers.update(subdomain, id, input),
        list: (page, perPage) => customers.list(subdomain, page, perPage),
        delete: (id) => customers.delete(subdomain, id),
      },
      paymentProfiles: {
        update: (id, input) => subscriptions.updatePaymentProfile(subdomain, id, input),
      },
      subscriptions: {
        create: (input) => subscriptions.create(subdomain, input),
        get: (id) => subscriptions.get(subdomain, id),
        list: (query) => subscriptions.list(subdomain, query),
        transactions: (id) => subscriptions.transactions(subdomain, id),
        updateCard: (id, card) => subscriptions.updateCard(subdomain, id, card),
        changeBillingDate: (id, at) => lifecycle.changeBillingDate(subdomain, id, at),
        cancel: (id, input) => lifecycle.cancel(subdomain, id, input),
        cancelAtEndOfPeriod: (id, input) => lifecycle.cancelAtEndOfPeriod(subdomain, id, input),
        undoCancelAtEndOfPeriod: (id) => lifecycle.undoCancelAtEndOfPeriod(subdomain, id),
        reactivate: (id, input) => lifecycle.reactivate(subdomain, id, input),
        hold: (id, input) => lifecycle.hold(subdomain, id, input),
        resume: (id) => lifecycle.resume(subdomain, id),
        changeProduct: (id, input) => migrations.changeProduct(subdomain, id, input),
        migrate: (id, input) => migrations.migrate(subdomain, id, input),
        previewMigration: (id, input) => migrations.preview(subdomain, id, input),
      },
    };
  };

  return {
    storage,
    clock,
    gateway,
    sites,
    site: handle,
    async authenticate(subdomain, apiKey) {
      const site = await sites.authenticate(subdomain, apiKey);
      return handle(site.subdomain);
    },
    runDue: (runOptions) => renewals.runDue(runOptions),
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
