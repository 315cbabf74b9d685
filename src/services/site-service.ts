import { assertCurrency } from '../domain/money/index.js';
import { generateApiKey, generateSecret, hashSecret, secretHashMatches } from '../domain/signing/index.js';
import { assertTimeZone } from '../domain/time/index.js';
import { BillingError, invalid, ValidationCollector } from '../errors.js';
import type {
  ApiKeyRecord,
  ClearScope,
  SiteMode,
  SitePatch,
  SiteRecord,
  SiteSettings,
  StorageTransaction,
} from '../ports/storage.js';
import { copyCatalog } from './catalog-service.js';
import { loadSite } from './site-lookup.js';

export { loadSite };

import { type CommandContext, type CommandDeps, runCommand } from './command-runner.js';
import { scheduleExpiringCardScan } from './renewal-schedule.js';

/** Settings a new site starts with. */
export const DEFAULT_SITE_SETTINGS: SiteSettings = {
  periodRule: 'anchor',
  referralsEnabled: false,
  dunning: { retryCount: 3, retryIntervalHours: 24, finalAction: 'canceled' },
  webhooksEnabled: true,
  portal: { allowPlanChange: true, allowCancel: true, allowCardUpdate: true, allowComponentChange: true },
};

/** A partial settings update: any subset, nested objects merged. */
export interface SiteSettingsInput {
  readonly periodRule?: 'anchor' | 'sticky';
  readonly referralsEnabled?: boolean;
  readonly dunning?: Partial<SiteSettings['dunning']>;
  readonly webhooksEnabled?: boolean;
  readonly portal?: Partial<SiteSettings['portal']>;
  /**
   * Invoice numbering and terms, for invoices issued from now on (issued ones keep their number
   * and dates): `prefix` up to 16 letters, digits, `-` and `_` (empty for none); `netTermsDays`
   * a whole number of days from 0 to 365. A field left out keeps its value.
   */
  readonly invoices?: Partial<NonNullable<SiteSettings['invoices']>>;
}

/** Input of {@link SiteService.create}. */
export interface CreateSiteInput {
  /** A DNS label, lower case: the first label of the site's API host. */
  readonly subdomain: string;
  readonly name?: string;
  /** ISO 4217 code; a site has exactly one currency. */
  readonly currency: string;
  /** IANA zone; default `UTC`. */
  readonly timeZone?: string;
  readonly dateFormat?: string;
  readonly timeFormat?: string;
  /** Default `test`. A new site may start live: it has no test data yet. */
  readonly mode?: SiteMode;
  readonly settings?: SiteSettingsInput;
}

/** Input of {@link SiteService.update}. */
export interface UpdateSiteInput {
  readonly name?: string;
  readonly currency?: string;
  readonly timeZone?: string;
  readonly dateFormat?: string;
  readonly timeFormat?: string;
  readonly mode?: SiteMode;
  readonly settings?: SiteSettingsInput;
}

/** Direct-post credentials as issued: the password and secret are shown here once. */
export interface IssuedDirectCredentials {
  readonly apiId: string;
  readonly apiSecret: string;
  readonly apiPassword: string;
}

/** What creating a site returns: the site and its first credentials, shown once. */
export interface CreatedSite {
  readonly site: SiteRecord;
  readonly apiKey: string;
  readonly sharedKey: string;
  readonly direct: IssuedDirectCredentials;
}

/** An API key as listed: never the key itself. */
export interface ApiKeySummary {
  readonly id: number;
  readonly name: string;
  readonly prefix: string;
  readonly createdAt: Date;
}

// What a missing site's key is compared with, so that an unknown site costs the same comparison.
const NO_KEY_HASH = '0'.repeat(64);

const SUBDOMAIN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Sites and their credentials: create, edit, delete, clone, clear data, go live; API keys
 * (random, stored hashed, shown once), the shared key and direct-post credentials.
 */
export class SiteService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /** Creates a site with one API key, a shared key and direct credentials. */
  async create(input: CreateSiteInput): Promise<CreatedSite> {
    const fields = checkNewSite(input);
    return runCommand(this.#deps, (ctx) => insertSite(ctx, fields));
  }

  /** The site with this subdomain; `not_found` when there is none. */
  get(subdomain: string): Promise<SiteRecord> {
    return this.#deps.storage.transaction((tx) => loadSite(tx, subdomain), { readOnly: true });
  }

  /** Every site, by id. */
  list(): Promise<SiteRecord[]> {
    return this.#deps.storage.transaction((tx) => tx.sites.list(), { readOnly: true });
  }

  /**
   * Edits a site. The currency can change only while the site has no subscriptions or
   * transactions; the mode can become `live` only when no test data remains (clear it first).
   */
  update(subdomain: string, input: UpdateSiteInput): Promise<SiteRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const errors = new ValidationCollector();
      const patch: { -readonly [K in keyof SitePatch]: SitePatch[K] } = {};
      if (input.name !== undefined) {
        if (typeof input.name !== 'string' || input.name.trim() === '') errors.add('Name: cannot be blank.', 'name');
        else patch.name = input.name.trim();
      }
      if (input.timeZone !== undefined) patch.timeZone = errors.capture(() => zone(input.timeZone));
      if (input.dateFormat !== undefined) patch.dateFormat = input.dateFormat;
      if (input.timeFormat !== undefined) patch.timeFormat = input.timeFormat;
      if (input.settings !== undefined)
        patch.settings = errors.capture(() => mergeSettings(site.settings, input.settings!));
      const currency = input.currency === undefined ? undefined : errors.capture(() => assertCurrency(input.currency));
      const mode = input.mode === undefined ? undefined : errors.capture(() => assertMode(input.mode));
      errors.throwIfAny();
      const needsCounts =
        (currency !== undefined && currency !== site.currency) || (mode === 'live' && site.mode === 'test');
      const counts = needsCounts ? await ctx.tx.siteData.counts(site.id) : undefined;
      if (currency !== undefined && currency !== site.currency) {
        if (counts!.subscriptions > 0 || counts!.transactions > 0) {
          throw invalid('Currency: cannot be changed while the site has subscriptions or transactions.', 'currency');
        }
        patch.currency = currency;
      }
      if (mode !== undefined && mode !== site.mode) {
        if (mode === 'live' && counts!.customers + counts!.subscriptions + counts!.transactions > 0) {
          throw invalid('Mode: the site has test data; clear the site data before going live.', 'mode');
        }
        patch.mode = mode;
      }
      patch.updatedAt = ctx.now;
      const updated = await ctx.tx.sites.updateAtVersion(site.id, site.version, patch);
      if (updated === undefined)
        throw new BillingError('conflict', 'The site was changed by another request; try again.');
      ctx.record({
        siteId: site.id,
        key: 'site_update',
        subjectType: 'site',
        subjectId: site.id,
        payload: { site: { id: site.id, subdomain } },
      });
      return updated;
    });
  }

  /** Deletes a site and everything that belongs to it. */
  delete(subdomain: string): Promise<void> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await ctx.tx.sites.delete(site.id);
    });
  }

  /**
   * Creates a new test site with the source's currency, zone, formats and settings and a copy of
   * its catalog (families, products at their current version, components, coupons), in one
   * command: a failure leaves no new site. Customers, subscriptions and credentials are never copied.
   */
  async clone(sourceSubdomain: string, input: { subdomain: string; name?: string }): Promise<CreatedSite> {
    const source = await this.get(sourceSubdomain);
    const fields = checkNewSite({
      subdomain: input.subdomain,
      name: input.name ?? `${source.name} (copy)`,
      currency: source.currency,
      timeZone: source.timeZone,
      dateFormat: source.dateFormat,
      timeFormat: source.timeFormat,
      mode: 'test',
      settings: source.settings,
    });
    return runCommand(this.#deps, async (ctx) => {
      const created = await insertSite(ctx, fields);
      await copyCatalog(ctx, source.id, created.site.id);
      return created;
    });
  }

  /**
   * Removes the site's customer data (scope `all` or `customers`); the catalog, credentials and
   * settings stay. Required before a test site goes live.
   */
  async clearData(subdomain: string, scope: ClearScope = 'all'): Promise<void> {
    if (scope !== 'all' && scope !== 'customers')
      throw invalid("Cleanup scope: must be 'all' or 'customers'.", 'cleanup_scope');
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      // Clearing removes customer records; on a live site those are real customers' money trail.
      if (site.mode === 'live') throw invalid('Site data can only be cleared on a site in test mode.', 'mode');
      await ctx.tx.siteData.clear(site.id, scope);
      // Clearing removes all of the site's due work; the periodic card scan starts again.
      await scheduleExpiringCardScan(ctx.tx, site, ctx.now);
    });
  }

  /** Issues a new API key; the key is returned once and only its hash is kept. */
  createApiKey(subdomain: string, name = 'api key'): Promise<{ id: number; key: string; prefix: string }> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const issued = await issueApiKey(ctx.tx, site.id, name, ctx.now);
      return { id: issued.record.id, key: issued.key, prefix: issued.record.prefix };
    });
  }

  /** The site's active API keys, without secrets. */
  listApiKeys(subdomain: string): Promise<ApiKeySummary[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const keys = await tx.credentials.activeApiKeys(site.id);
      return keys.map((k) => ({ id: k.id, name: k.name, prefix: k.prefix, createdAt: k.createdAt }));
    });
  }

  /** Revokes an API key; `not_found` when the site has no such active key. */
  revokeApiKey(subdomain: string, keyId: number): Promise<void> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      if (!(await ctx.tx.credentials.revokeApiKey(site.id, keyId, ctx.now)))
        throw new BillingError('not_found', 'API key not found.');
    });
  }

  /** Replaces the shared key (webhook signatures, hosted-page tokens); returns the new one. */
  rotateSharedKey(subdomain: string): Promise<string> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const sharedKey = generateSecret(24);
      const updated = await ctx.tx.sites.updateAtVersion(site.id, site.version, { sharedKey, updatedAt: ctx.now });
      if (updated === undefined)
        throw new BillingError('conflict', 'The site was changed by another request; try again.');
      return sharedKey;
    });
  }

  /** Revokes the site's direct credentials and issues new ones, shown once. */
  rotateDirectCredentials(subdomain: string): Promise<IssuedDirectCredentials> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await ctx.tx.credentials.revokeDirect(site.id, ctx.now);
      return issueDirect(ctx.tx, site.id, ctx.now);
    });
  }

  /**
   * The site whose active API key this is; `unauthorized` otherwise. Every active key of the site
   * is compared in constant time, and a missing site costs the same comparison, so timing tells
   * nothing about which part was wrong.
   */
  authenticate(subdomain: string, apiKey: string): Promise<SiteRecord> {
    return this.#deps.storage.transaction(
      async (tx) => {
        const site =
          typeof subdomain === 'string' ? await tx.sites.findBySubdomain(subdomain.toLowerCase()) : undefined;
        const keys: ApiKeyRecord[] = site ? await tx.credentials.activeApiKeys(site.id) : [];
        // One hash of the presented key, compared with each stored hash in constant time.
        const presented = hashSecret(typeof apiKey === 'string' ? apiKey : '');
        let matched = false;
        for (const key of keys.length > 0 ? keys : [undefined]) {
          const equal = secretHashMatches(presented, key?.secretHash ?? NO_KEY_HASH);
          matched = (equal && key !== undefined) || matched;
        }
        if (!site || !matched) throw unauthorized();
        return site;
      },
      { readOnly: true },
    );
  }

  /**
   * The site and direct credential for an `api_id` and password (HTTP Basic on direct-post
   * reads); `unauthorized` when either is wrong.
   */
  authenticateDirect(
    apiId: string,
    apiPassword: string,
  ): Promise<{ site: SiteRecord; apiId: string; apiSecret: string }> {
    return this.#deps.storage.transaction(async (tx) => {
      const credential = await tx.credentials.findDirectByApiId(apiId);
      const expected = credential?.apiPasswordHash ?? NO_KEY_HASH;
      const equal = secretHashMatches(hashSecret(typeof apiPassword === 'string' ? apiPassword : ''), expected);
      const site = credential && equal ? await tx.sites.findById(credential.siteId) : undefined;
      if (!credential || !equal || !site) throw unauthorized();
      return { site, apiId: credential.apiId, apiSecret: credential.apiSecret };
    });
  }
}

/** A new site's checked fields. */
interface NewSiteFields {
  readonly subdomain: string;
  readonly name: string;
  readonly currency: string;
  readonly timeZone: string;
  readonly dateFormat: string;
  readonly timeFormat: string;
  readonly mode: SiteMode;
  readonly settings: SiteSettings;
}

/** Checks a new site's input, reporting every problem at once. */
function checkNewSite(input: CreateSiteInput): NewSiteFields {
  const errors = new ValidationCollector();
  const subdomain = errors.capture(() => assertSubdomain(input.subdomain));
  const currency = errors.capture(() => assertCurrency(input.currency));
  const timeZone = errors.capture(() => zone(input.timeZone ?? 'UTC'));
  const name = input.name ?? input.subdomain;
  if (typeof name !== 'string' || name.trim() === '') errors.add('Name: cannot be blank.', 'name');
  const mode = errors.capture(() => assertMode(input.mode ?? 'test'));
  const settings = errors.capture(() => mergeSettings(DEFAULT_SITE_SETTINGS, input.settings ?? {}));
  errors.throwIfAny();
  return {
    subdomain: subdomain!,
    name: name.trim(),
    currency: currency!,
    timeZone: timeZone!,
    dateFormat: input.dateFormat ?? 'YYYY-MM-DD',
    timeFormat: input.timeFormat ?? 'HH:mm:ss',
    mode: mode!,
    settings: settings!,
  };
}

/** Inserts a site with its first credentials inside a command; a taken subdomain is a validation error. */
async function insertSite(ctx: CommandContext, fields: NewSiteFields): Promise<CreatedSite> {
  const sharedKey = generateSecret(24);
  let site: SiteRecord;
  try {
    site = await ctx.tx.sites.insert({ ...fields, sharedKey, createdAt: ctx.now, updatedAt: ctx.now });
  } catch (error) {
    if (error instanceof BillingError && error.code === 'conflict')
      throw invalid('Subdomain: has already been taken.', 'subdomain');
    throw error;
  }
  const apiKey = await issueApiKey(ctx.tx, site.id, 'default', ctx.now);
  const direct = await issueDirect(ctx.tx, site.id, ctx.now);
  await scheduleExpiringCardScan(ctx.tx, site, ctx.now);
  return { site, apiKey: apiKey.key, sharedKey, direct };
}

/** The error for bad credentials, with the service's plain body. */
export function unauthorized(): BillingError {
  return new BillingError('unauthorized', 'HTTP Basic: Access denied.', { shape: 'plain' });
}

async function issueApiKey(tx: StorageTransaction, siteId: number, name: string, now: Date) {
  const { key, prefix } = generateApiKey();
  const record = await tx.credentials.insertApiKey({
    siteId,
    name,
    prefix,
    secretHash: hashSecret(key),
    createdAt: now,
    revokedAt: null,
  });
  return { key, record };
}

async function issueDirect(tx: StorageTransaction, siteId: number, now: Date): Promise<IssuedDirectCredentials> {
  const apiId = generateSecret(16, undefined, 'hex');
  const apiSecret = generateSecret(24);
  const apiPassword = generateSecret(24);
  await tx.credentials.insertDirect({
    siteId,
    apiId,
    apiSecret,
    apiPasswordHash: hashSecret(apiPassword),
    defaultRedirectUri: null,
    createdAt: now,
    revokedAt: null,
  });
  return { apiId, apiSecret, apiPassword };
}

function assertSubdomain(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid('Subdomain: cannot be blank.', 'subdomain');
  const subdomain = value.trim().toLowerCase();
  if (!SUBDOMAIN.test(subdomain)) {
    throw invalid(
      'Subdomain: must be a DNS label of 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen.',
      'subdomain',
    );
  }
  return subdomain;
}

function zone(value: unknown): string {
  assertTimeZone(value);
  return value;
}

function assertMode(value: unknown): SiteMode {
  if (value !== 'test' && value !== 'live') throw invalid("Mode: must be 'test' or 'live'.", 'mode');
  return value;
}

/** An invoice number prefix: up to 16 letters, digits, `-` and `_`, or none. */
const INVOICE_PREFIX = /^[A-Za-z0-9_-]{0,16}$/;

function mergeSettings(base: SiteSettings, input: SiteSettingsInput): SiteSettings {
  const errors = new ValidationCollector();
  const merged: SiteSettings = {
    periodRule: input.periodRule ?? base.periodRule,
    referralsEnabled: input.referralsEnabled ?? base.referralsEnabled,
    webhooksEnabled: input.webhooksEnabled ?? base.webhooksEnabled,
    dunning: { ...base.dunning, ...input.dunning },
    portal: { ...base.portal, ...input.portal },
    ...(input.invoices === undefined
      ? base.invoices === undefined
        ? {}
        : { invoices: base.invoices }
      : {
          invoices: {
            prefix: input.invoices?.prefix ?? base.invoices?.prefix ?? '',
            netTermsDays: input.invoices?.netTermsDays ?? base.invoices?.netTermsDays ?? 0,
          },
        }),
  };
  if (merged.periodRule !== 'anchor' && merged.periodRule !== 'sticky')
    errors.add("Period rule: must be 'anchor' or 'sticky'.");
  const { retryCount, retryIntervalHours, finalAction } = merged.dunning;
  if (!Number.isInteger(retryCount) || retryCount < 0 || retryCount > 30)
    errors.add('Dunning retry count: must be a whole number from 0 to 30.');
  if (!Number.isInteger(retryIntervalHours) || retryIntervalHours < 1 || retryIntervalHours > 720) {
    errors.add('Dunning retry interval: must be a whole number of hours from 1 to 720.');
  }
  if (finalAction !== 'canceled' && finalAction !== 'unpaid')
    errors.add("Dunning final action: must be 'canceled' or 'unpaid'.");
  if (merged.invoices !== undefined) {
    const { prefix, netTermsDays } = merged.invoices;
    if (typeof prefix !== 'string' || !INVOICE_PREFIX.test(prefix))
      errors.add('Invoice prefix: must be at most 16 letters, digits, hyphens and underscores.', 'invoices.prefix');
    if (!Number.isInteger(netTermsDays) || netTermsDays < 0 || netTermsDays > 365)
      errors.add('Invoice net terms: must be a whole number of days from 0 to 365.', 'invoices.net_terms_days');
  }
  for (const flag of [merged.referralsEnabled, merged.webhooksEnabled, ...Object.values(merged.portal)]) {
    if (typeof flag !== 'boolean') {
      errors.add('Settings: flags must be true or false.');
      break;
    }
  }
  errors.throwIfAny();
  return merged;
}
