import mitt, { type Emitter } from 'mitt';
import { systemClock } from './clock.js';
import type { BillingEventMap, EventKey } from './events.js';
import type { Clock } from './ports/clock.js';
import type { PaymentGateway } from './ports/gateway.js';
import type { CustomerRecord, ProductFamilyRecord, SiteRecord, Storage, TransactionRecord } from './ports/storage.js';
import { CatalogService, type FamilyInput, type ProductInput, type ProductView } from './services/catalog-service.js';
import { type CustomerInput, CustomerService } from './services/customer-service.js';
import { RenewalService, type RunDueOptions, type RunDueSummary } from './services/renewal-service.js';
import { SiteService } from './services/site-service.js';
import {
  type CreateSubscriptionInput,
  type SubscriptionDeps,
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
  };
  readonly subscriptions: {
    create(input: CreateSubscriptionInput): Promise<SubscriptionView>;
    get(id: number): Promise<SubscriptionView>;
    transactions(id: number): Promise<TransactionRecord[]>;
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
      },
      subscriptions: {
        create: (input) => subscriptions.create(subdomain, input),
        get: (id) => subscriptions.get(subdomain, id),
        transactions: (id) => subscriptions.transactions(subdomain, id),
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
