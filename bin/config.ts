/**
 * The CLI's configuration: every environment variable and flag it reads, read here and only here,
 * validated once. Each setting has one environment variable name; a flag, where there is one,
 * wins over the variable, and the variable over the default. An empty variable counts as unset.
 * A bad value is a {@link ConfigError} whose message is one line saying what is wrong and what
 * is accepted. README.md ("Configuration") documents the same table.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { LOG_LEVELS, type LogFormat, type LogLevel } from '../examples/http/ops/logger.js';

/** A bad setting; the CLI prints its message as one line and exits non-zero. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Where the CLI keeps data when no database is named: embedded SQLite in the working directory. */
export const DEFAULT_DATABASE = './data/billing.sqlite';

/** Where `serve` listens when no address is named: loopback only. */
export const DEFAULT_HOST = '127.0.0.1';

export type Compat = 'spec' | 'chargify';

/** The validated settings. */
export interface Config {
  /** SQLite file path, `:memory:`, or a postgres:// URL. */
  readonly database: string;
  /** Port `serve` listens on. */
  readonly port: number;
  /** Address `serve` binds: an IPv4 or IPv6 literal, or `localhost`; loopback by default. */
  readonly host: string;
  /** Output spellings of the HTTP API. */
  readonly compat: Compat;
  /** Pause between rounds of due work and webhook delivery in `serve` and `worker`, in ms. */
  readonly workIntervalMs: number;
  /** Whether webhooks may go to loopback and private addresses (local development only). */
  readonly allowLocalWebhooks: boolean;
  /**
   * The public origin billing-portal links are signed for: `{site}.{this}` (a domain, or an origin
   * such as `https://billing.example.com`); empty means `http://localhost:{port}`.
   */
  readonly publicBaseDomain: string;
  /** The least severe log level written (`silent` writes none). */
  readonly logLevel: LogLevel;
  /** `json`, `pretty` (human-readable) or `auto` (pretty on a terminal, JSON otherwise). */
  readonly logFormat: LogFormat;
  /** The Bearer token `/metrics` requires; empty means none (then metrics are loopback-only). */
  readonly metricsToken: string;
  /** The port the worker serves `/healthz`, `/readyz` and `/metrics` on; undefined serves none. */
  readonly metricsPort: number | undefined;
  /** Due-work items per round: a shutdown waits for at most one round. */
  readonly workBatchSize: number;
  /** How long a shutdown may wait for in-flight requests and work before the process exits anyway. */
  readonly shutdownTimeoutMs: number;
}

export type SettingName = keyof Config;

interface Setting<T> {
  readonly env?: string;
  readonly flag?: string;
  readonly fallback: T;
  /** What is accepted, for the error message. */
  readonly expects: string;
  readonly schema: z.ZodType<T, string>;
  /** A secret: a bad value is named but never echoed. */
  readonly secret?: boolean;
}

const wholeNumber = (min: number, max: number) =>
  z.string().trim().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));

export const MIN_WORK_INTERVAL_MS = 10;

/** The shortest metrics token accepted: a guessable token is no protection. */
export const MIN_METRICS_TOKEN_LENGTH = 16;

/** Every setting: its one environment variable, its flag, its default and what it accepts. */
export const SETTINGS: { readonly [K in SettingName]: Setting<Config[K]> } = {
  database: {
    env: 'DATABASE_URL',
    flag: '--db',
    fallback: DEFAULT_DATABASE,
    expects: 'a SQLite file path, :memory: or a postgres:// URL',
    schema: z.string().min(1),
  },
  port: {
    env: 'PORT',
    flag: '--port',
    fallback: 3000,
    expects: 'a port number from 0 to 65535',
    schema: wholeNumber(0, 65_535),
  },
  host: {
    env: 'BILLING_HOST',
    flag: '--host',
    fallback: DEFAULT_HOST,
    expects: 'an IPv4 or IPv6 address (127.0.0.1, 0.0.0.0, ::) or localhost',
    schema: z
      .string()
      .trim()
      // A bracketed IPv6 literal, as in a URL, is taken without its brackets.
      .transform((v) => (/^\[.*\]$/.test(v) ? v.slice(1, -1) : v))
      .refine((v) => v.toLowerCase() === 'localhost' || isIP(v) !== 0)
      .transform((v) => (v.toLowerCase() === 'localhost' ? 'localhost' : v)),
  },
  compat: {
    env: 'BILLING_COMPAT',
    flag: '--compat',
    fallback: 'spec',
    expects: "'spec' or 'chargify'",
    schema: z.enum(['spec', 'chargify']),
  },
  workIntervalMs: {
    env: 'BILLING_WORK_INTERVAL_MS',
    flag: '--interval',
    fallback: 5000,
    expects: `a whole number of milliseconds from ${MIN_WORK_INTERVAL_MS} to 86400000`,
    schema: wholeNumber(MIN_WORK_INTERVAL_MS, 86_400_000),
  },
  allowLocalWebhooks: {
    env: 'BILLING_ALLOW_LOCAL_WEBHOOKS',
    fallback: false,
    expects: "'1' or 'true' to allow, '0' or 'false' to refuse",
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(['1', 'true', '0', 'false']))
      .transform((v) => v === '1' || v === 'true'),
  },
  publicBaseDomain: {
    env: 'BILLING_PUBLIC_BASE_DOMAIN',
    flag: '--public-base-domain',
    fallback: '',
    expects: 'a domain (billing.example.com) or an origin (https://billing.example.com)',
    schema: z
      .string()
      .trim()
      .regex(/^(https?:\/\/)?[a-z0-9.-]+(:\d{1,5})?$/i),
  },
  logLevel: {
    env: 'LOG_LEVEL',
    fallback: 'info',
    expects: LOG_LEVELS.map((level) => `'${level}'`).join(', '),
    schema: z.string().trim().toLowerCase().pipe(z.enum(LOG_LEVELS)),
  },
  logFormat: {
    env: 'LOG_FORMAT',
    fallback: 'auto',
    expects: "'auto' (pretty on a terminal, JSON otherwise), 'json' or 'pretty'",
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(['auto', 'json', 'pretty'])),
  },
  metricsToken: {
    env: 'BILLING_METRICS_TOKEN',
    fallback: '',
    secret: true,
    expects: `a token of at least ${MIN_METRICS_TOKEN_LENGTH} characters without spaces (e.g. from openssl rand -hex 32)`,
    schema: z
      .string()
      .trim()
      .regex(new RegExp(`^\\S{${MIN_METRICS_TOKEN_LENGTH},}$`)),
  },
  metricsPort: {
    env: 'BILLING_METRICS_PORT',
    flag: '--metrics-port',
    fallback: undefined,
    expects: 'a port number from 0 to 65535',
    schema: wholeNumber(0, 65_535),
  },
  workBatchSize: {
    env: 'BILLING_WORK_BATCH_SIZE',
    flag: '--batch-size',
    fallback: 100,
    expects: 'a whole number of items from 1 to 100000',
    schema: wholeNumber(1, 100_000),
  },
  shutdownTimeoutMs: {
    env: 'BILLING_SHUTDOWN_TIMEOUT_MS',
    fallback: 30_000,
    expects: 'a whole number of milliseconds from 0 to 3600000',
    schema: wholeNumber(0, 3_600_000),
  },
};

type Env = Readonly<Record<string, string | undefined>>;

function readOne<K extends SettingName>(name: K, flagValue: string | undefined, env: Env): Config[K] {
  const setting = SETTINGS[name] as Setting<Config[K]>;
  const fromEnv = setting.env === undefined ? undefined : env[setting.env];
  const [raw, source] =
    flagValue !== undefined
      ? [flagValue, setting.flag ?? name]
      : fromEnv !== undefined && fromEnv !== ''
        ? [fromEnv, setting.env ?? name]
        : [undefined, undefined];
  if (raw === undefined) return setting.fallback;
  const parsed = setting.schema.safeParse(raw);
  if (!parsed.success) {
    const shown = setting.secret === true ? '(hidden)' : JSON.stringify(raw);
    const given = source.startsWith('--') ? `${source} ${shown}` : `${source}=${shown}`;
    throw new ConfigError(`${given} is not valid: expected ${setting.expects}.`);
  }
  return parsed.data;
}

/**
 * Reads the named settings from the flags given (by setting name) and the environment; the
 * settings a command does not use are not read, so a stray variable cannot break it.
 */
export function readConfig<K extends SettingName>(
  names: readonly K[],
  flags: Partial<Record<SettingName, string>> = {},
  env: Env = process.env,
): Pick<Config, K> {
  const config = {} as Pick<Config, K>;
  for (const name of names) config[name] = readOne(name, flags[name], env);
  return config;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/i;

/**
 * Parses `--until`: an ISO 8601 date (midnight UTC) or date and time with a zone (`Z` or an
 * offset), so that the instant does not depend on the machine's time zone.
 */
export function parseUntil(value: string): Date {
  const trimmed = value.trim();
  const date = ISO_INSTANT.test(trimmed) ? new Date(trimmed) : undefined;
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw new ConfigError(
      `--until ${JSON.stringify(value)} is not an ISO 8601 instant: give a date like 2026-02-01 or a time with a zone like 2026-02-01T00:00:00Z.`,
    );
  }
  return date;
}
