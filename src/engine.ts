import mitt, { type Emitter } from 'mitt';
import { systemClock } from './clock.js';
import type { BillingEventMap, EventKey } from './events.js';
import type { Clock } from './ports/clock.js';
import type { SiteRecord, Storage } from './ports/storage.js';
import type { CommandDeps } from './services/command-runner.js';
import { SiteService } from './services/site-service.js';

/** Options of {@link createBillingEngine}. */
export interface BillingEngineOptions {
  /** Where the engine keeps its data: memory, SQLite or Postgres adapter, or your own. */
  readonly storage: Storage;
  /** The engine's only source of time; default the system clock. Use a ManualClock to simulate. */
  readonly clock?: Clock;
}

/**
 * A handle on one site: every operation through it is confined to that site's records, so code
 * holding it cannot reach another tenant's data by id.
 */
export interface SiteHandle {
  readonly subdomain: string;
  /** The site's current record. */
  info(): Promise<SiteRecord>;
}

/** The billing engine: sites, their site-scoped handles, and in-process events. */
export interface BillingEngine {
  readonly storage: Storage;
  readonly clock: Clock;
  /** Site management and credentials. */
  readonly sites: SiteService;
  /** A handle scoped to one site (not checked until used). */
  site(subdomain: string): SiteHandle;
  /** A handle on the site whose API key this is; throws `unauthorized` otherwise. */
  authenticate(subdomain: string, apiKey: string): Promise<SiteHandle>;
  /** Listens to committed events of one key, or `*` for all. Returns a function that stops listening. */
  on<K extends EventKey>(key: K | '*', listener: (event: BillingEventMap[K]) => void): () => void;
  /** Creates or upgrades the storage schema. */
  migrate(): Promise<void>;
  /** Closes the storage. */
  close(): Promise<void>;
}

/** Creates a billing engine over a storage, a clock and (later) a payment gateway. */
export function createBillingEngine(options: BillingEngineOptions): BillingEngine {
  const storage = options.storage;
  const clock = options.clock ?? systemClock;
  const emitter: Emitter<BillingEventMap> = mitt<BillingEventMap>();
  const deps: CommandDeps = {
    storage,
    clock,
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

  const handle = (subdomain: string): SiteHandle => ({
    subdomain: subdomain.toLowerCase(),
    info: () => sites.get(subdomain),
  });

  return {
    storage,
    clock,
    sites,
    site: handle,
    async authenticate(subdomain, apiKey) {
      const site = await sites.authenticate(subdomain, apiKey);
      return handle(site.subdomain);
    },
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
