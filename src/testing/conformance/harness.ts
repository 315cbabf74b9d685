import type { NewSite, SiteSettings, Storage, StorageCapabilities } from 'billing-engine';

/** A test function as test runners declare it (vitest, jest, node:test's `it` all fit). */
export type TestFunction = ((name: string, fn: () => Promise<void> | void, timeout?: number) => void) & {
  readonly skip?: (name: string, fn: () => Promise<void> | void) => void;
};

/**
 * The runner functions the conformance suite needs, passed in so that the shipped suite does not
 * depend on one test runner. Assertions use `node:assert/strict`, which every runner reports.
 */
export interface ConformanceTestApi {
  readonly describe: (name: string, fn: () => void) => void;
  readonly it: TestFunction;
  readonly beforeEach: (fn: () => Promise<void> | void) => void;
  readonly afterEach: (fn: () => Promise<void> | void) => void;
  readonly beforeAll?: (fn: () => Promise<void> | void) => void;
  readonly afterAll?: (fn: () => Promise<void> | void) => void;
  /** Accepted for convenience (the runner's `expect`); the suite itself asserts with node:assert. */
  readonly expect?: unknown;
}

/** How the suite gets a fresh storage for each test, and disposes of it. */
export interface StorageHarness {
  /** The adapter's name in test titles: `memory`, `sqlite`, `postgres`. */
  readonly name: string;
  /** A fresh, migrated, empty storage for one test. */
  create(): Promise<Storage>;
  /** Called after each test; the default closes the storage. */
  destroy?(storage: Storage): Promise<void>;
  /**
   * The capabilities the storages of this harness have, known before any test runs, so that
   * cases needing a capability are registered as skipped (with the reason printed) up front.
   */
  readonly capabilities?: Partial<StorageCapabilities>;
}

/** What a section of the suite gets: the runner, and the current test's storage. */
export interface SectionContext {
  readonly api: ConformanceTestApi;
  readonly harness: StorageHarness;
  /** The storage of the running test. */
  storage(): Storage;
  /**
   * Registers a test that needs a capability: when the harness declares it absent the test is
   * registered as skipped and `reason` is printed.
   */
  itWith(capability: keyof StorageCapabilities, reason: string, name: string, fn: () => Promise<void>): void;
}

/** Default settings used by conformance fixtures. */
export const FIXTURE_SETTINGS: SiteSettings = {
  periodRule: 'anchor',
  referralsEnabled: false,
  dunning: { retryCount: 3, retryIntervalHours: 24, finalAction: 'canceled' },
  webhooksEnabled: true,
  portal: { allowPlanChange: true, allowCancel: true, allowCardUpdate: true, allowComponentChange: true },
};

/** The fixed instant fixtures use; with milliseconds so precision loss shows. */
export const T0 = new Date('2026-03-01T10:00:00.123Z');

/** A new-site fixture with a unique subdomain. */
export function newSiteFixture(subdomain: string, overrides: Partial<NewSite> = {}): NewSite {
  return {
    subdomain,
    name: `Site ${subdomain}`,
    currency: 'USD',
    timeZone: 'America/New_York',
    dateFormat: 'YYYY-MM-DD',
    timeFormat: 'HH:mm',
    mode: 'test',
    sharedKey: `shared-${subdomain}`,
    settings: FIXTURE_SETTINGS,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** Adds milliseconds to an instant. */
export function at(base: Date, ms: number): Date {
  return new Date(base.getTime() + ms);
}
