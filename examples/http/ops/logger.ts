/**
 * The structured logs of the server and the worker: pino, one JSON object per line, or
 * human-readable lines through pino-pretty on a terminal. Secrets never reach a line: pino's
 * `redact` blanks the fields that hold them (keys, passwords, signatures, card fields, the
 * Authorization header), and every string that is written (message, fields, error message and
 * stack) has card numbers masked as the service masks them (`XXXX-XXXX-XXXX-1111`) and API keys
 * cut to their visible prefix.
 */
import { luhnValid } from 'billing-engine';
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

/** The levels `LOG_LEVEL` accepts, most severe first; `silent` turns logging off. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `json` (one object per line), `pretty` (pino-pretty), or `auto`: pretty on a terminal, JSON otherwise. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/** Options of {@link createLogger}. */
export interface LoggerSetup {
  readonly level?: LogLevel;
  readonly format?: LogFormat;
  /** Where lines go; default stdout. A test passes a stream of its own. */
  readonly destination?: DestinationStream & { readonly isTTY?: boolean };
  /** Fields on every line, e.g. `{ process: 'worker' }`. */
  readonly base?: Record<string, unknown>;
}

/** The text that replaces a redacted field. */
export const REDACTED = '[redacted]';

// Field names that hold a secret wherever they appear (one level of nesting, as pino's redaction
// paths go; deeper card numbers are still masked by `maskSecrets`).
const SECRET_FIELDS = [
  'authorization',
  'password',
  'api_key',
  'apiKey',
  'api_secret',
  'apiSecret',
  'api_password',
  'apiPassword',
  'shared_key',
  'sharedKey',
  'signature',
  'token',
  'card_number',
  'cardNumber',
  'full_number',
  'fullNumber',
  'cvv',
  'metricsToken',
];

/** The redaction paths: each secret field at the top level and one level down, and request headers. */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
];

// 13 to 19 digits, optionally grouped by single spaces or dashes, not inside a longer number.
const CARD_LIKE = /(?<![\d])\d(?:[ -]?\d){12,18}(?![\d])/g;
// An API key: `bk_<8 hex>_<48 hex>`; the prefix is shown in `key list` and may stay.
const API_KEY = /\b(bk_[0-9a-f]{8})_[0-9a-f]{16,}/gi;

/**
 * `text` with every Luhn-valid card number masked as the service masks it (`XXXX-XXXX-XXXX-1111`)
 * and every API key cut to its prefix (`bk_1234abcd_[redacted]`).
 */
export function maskSecrets(text: string): string {
  return text
    .replace(CARD_LIKE, (match) => {
      const digits = match.replace(/[ -]/g, '');
      return luhnValid(digits) ? `XXXX-XXXX-XXXX-${digits.slice(-4)}` : match;
    })
    .replace(API_KEY, `$1_${REDACTED}`);
}

/** `value` with {@link maskSecrets} applied to every string in it (depth-limited; cycles cut). */
function maskDeep(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return maskSecrets(value);
  if (typeof value !== 'object' || value === null || depth > 8) return value;
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  // An error's message and stack are not enumerable: pino's serializer makes them fields first.
  if (value instanceof Error) return maskDeep(pino.stdSerializers.err(value), depth + 1, seen);
  if (Array.isArray(value)) return value.map((item) => maskDeep(item, depth + 1, seen));
  if (value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = maskDeep(item, depth + 1, seen);
  return out;
}

/** pino's error serializer, with card numbers and keys masked in the message and stack. */
function serializeError(error: unknown): unknown {
  // The serialized error is a field's value: its secret fields go, as the `*.field` paths say.
  if (!(error instanceof Error)) return censorSecretFields(maskDeep(error));
  return censorSecretFields(maskDeep(pino.stdSerializers.err(error)));
}

// The `*.field` paths of REDACT_PATHS are not given to pino: a wildcard path makes pino run its
// redaction on every field of every line (strings and numbers too), about 18 µs a line, three
// times the rest of the line. The formatters censor the same fields instead (`censorNested`), and
// pino keeps the paths that name their field (each secret field at the top level, the headers).
const PINO_REDACT_PATHS = REDACT_PATHS.filter((path) => !path.startsWith('*.'));

/**
 * `value` with each of its own secret fields replaced by {@link REDACTED}, as pino's `*.field`
 * paths replace them: only an object's own fields, whatever their value, in a shallow copy (the
 * caller's object is left alone) with the same prototype. Anything else is returned as it is.
 */
function censorSecretFields(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const field of SECRET_FIELDS) {
    if (!Object.hasOwn(value, field)) continue;
    copy ??= Object.assign(Object.create(Object.getPrototypeOf(value)) as Record<string, unknown>, value);
    copy[field] = REDACTED;
  }
  return copy ?? value;
}

/** `fields` (a line's or a child's) with {@link censorSecretFields} applied to each field's value. */
function censorNested(fields: Record<string, unknown>): Record<string, unknown> {
  let out = fields;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    const censored = censorSecretFields(value);
    if (censored === value) continue;
    if (out === fields) out = { ...fields };
    out[key] = censored;
  }
  return out;
}

/** The pino options every logger of the server and worker shares (exported for tests). */
export function loggerOptions(setup: Pick<LoggerSetup, 'level' | 'base'> = {}): LoggerOptions {
  return {
    level: setup.level ?? 'info',
    base: setup.base ?? null,
    timestamp: pino.stdTimeFunctions.isoTime,
    // Level names rather than numbers: `"level":"info"` reads in a terminal and greps in a file.
    formatters: {
      level: (label) => ({ level: label }),
      log: (object) => censorNested(maskDeep(object) as Record<string, unknown>),
      // The base fields too (pino's wildcard paths covered them; a child's: see `censoringChildren`).
      bindings: (bindings) => censorNested(bindings),
    },
    serializers: { err: serializeError, error: serializeError },
    redact: { paths: [...PINO_REDACT_PATHS], censor: REDACTED },
    hooks: {
      // The message string (and any printf arguments) are masked too.
      logMethod(args, method) {
        const masked = args.map((arg) => (typeof arg === 'string' ? maskSecrets(arg) : arg)) as typeof args;
        method.apply(this, masked);
      },
    },
  };
}

/**
 * A logger for the server or worker: JSON lines, or pino-pretty's lines when `format` is `pretty`
 * or `auto` on a terminal. Written synchronously, so that the last lines before an exit are kept.
 */
export function createLogger(setup: LoggerSetup = {}): Logger {
  const destination = setup.destination ?? pino.destination({ dest: 1, sync: true });
  const isTTY = setup.destination === undefined ? process.stdout.isTTY === true : setup.destination.isTTY === true;
  const format = setup.format ?? 'auto';
  const prettyLines = format === 'pretty' || (format === 'auto' && isTTY);
  const options = loggerOptions(setup);
  if (!prettyLines) return censoringChildren(pino(options, destination));
  // pino-pretty as a stream in this thread (not a transport worker), so that it also works bundled.
  const stream = pretty({
    colorize: isTTY,
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    destination,
  });
  return censoringChildren(pino(options, stream));
}

/**
 * `logger` with the fields of its children (`child(bindings)`, `setBindings`) censored one level
 * down as {@link censorNested} censors a line's: pino gives a child's bindings no formatter of
 * ours, and without the wildcard paths its redaction no longer reaches them. The methods are
 * replaced on the root alone; children (made by `Object.create` of their parent) inherit them.
 */
function censoringChildren(logger: Logger): Logger {
  const child = logger.child;
  const setBindings = logger.setBindings;
  Object.assign(logger, {
    child(this: Logger, bindings: Record<string, unknown>, options?: Parameters<Logger['child']>[1]) {
      return child.call(this, censorNested(bindings), options);
    },
    setBindings(this: Logger, bindings: Record<string, unknown>) {
      setBindings.call(this, censorNested(bindings));
    },
  });
  return logger;
}
