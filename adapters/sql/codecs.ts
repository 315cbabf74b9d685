/**
 * The one place where port values become column values and back, for both dialects.
 *
 * | value    | SQLite (STRICT tables)       | Postgres                       | in the port          |
 * |----------|------------------------------|--------------------------------|----------------------|
 * | id       | INTEGER                      | bigint (pg returns a string)   | safe integer number  |
 * | money    | INTEGER minor units          | bigint (pg returns a string)   | safe integer number  |
 * | decimal  | TEXT, exact                  | numeric (pg returns a string)  | decimal string       |
 * | instant  | INTEGER epoch milliseconds   | timestamptz(3)                 | Date, ms precision   |
 * | boolean  | INTEGER 0 / 1                | boolean                        | boolean              |
 * | JSON     | TEXT                         | jsonb                          | plain object         |
 *
 * Postgres keeps instants as `timestamptz(3)` rather than epoch numbers so that the database stays
 * readable and queryable by people and tools; a JS Date has millisecond precision, so the (3)
 * makes the round trip exact. A value that cannot be represented (an invalid Date, money beyond
 * 2^53, a float where an integer belongs) is refused with `BillingError('storage')` rather than
 * stored or read approximately.
 */
import { BillingError } from 'billing-engine';

/** The SQL dialects the shared adapter code supports. */
export type SqlDialectName = 'sqlite' | 'postgres';

/** Encoders whose column representation differs between the dialects. */
export interface ValueEncoders {
  /** An instant for an instant column: epoch ms (SQLite) or the Date itself (Postgres). */
  instant(value: Date): Date | number;
  /** A nullable instant. */
  nullableInstant(value: Date | null | undefined): Date | number | null;
  /** A boolean: 0 / 1 (SQLite) or a boolean (Postgres). */
  boolean(value: boolean): boolean | number;
  /** A JSON document, always as a JSON string (pg would turn a JS array into a Postgres array). */
  json(value: unknown): string;
}

/** The encoders of one dialect. */
export function createValueEncoders(dialect: SqlDialectName): ValueEncoders {
  const sqlite = dialect === 'sqlite';
  const instant = (value: Date): Date | number => {
    const ms = checkedEpoch(value);
    // A copy, so that a caller mutating its Date later cannot change a queued parameter.
    return sqlite ? ms : new Date(ms);
  };
  return {
    instant,
    nullableInstant: (value) => (value === null || value === undefined ? null : instant(value)),
    boolean: (value) => (sqlite ? (value ? 1 : 0) : value),
    json: encodeJson,
  };
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INTEGER_TEXT = /^-?\d+$/;
const DECIMAL_TEXT = /^-?\d+(\.\d+)?$/;

function corrupt(what: string, value: unknown): BillingError {
  return new BillingError('storage', `Cannot convert ${what}: ${describe(value)}.`, { data: { what } });
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (value instanceof Date) return `Date(${value.getTime()})`;
  return typeof value === 'bigint' ? `${value}n` : String(value);
}

function checkedEpoch(value: Date): number {
  const ms = value instanceof Date ? value.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) throw corrupt('an invalid Date to an instant', value);
  return ms;
}

/**
 * An int8 column value as a safe integer. pg returns int8 as a decimal string; the magnitude is
 * checked on the exact BigInt before converting, because `Number('9007199254740993')` silently
 * rounds to a different safe-looking integer.
 */
export function decodeInteger(value: unknown, what = 'an integer column'): number {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return value;
    throw corrupt(what, value);
  }
  let exact: bigint;
  if (typeof value === 'bigint') exact = value;
  else if (typeof value === 'string' && INTEGER_TEXT.test(value)) exact = BigInt(value);
  else throw corrupt(what, value);
  if (exact > MAX_SAFE || exact < -MAX_SAFE) throw corrupt(what, value);
  const result = Number(exact);
  if (!Number.isSafeInteger(result)) throw corrupt(what, value);
  return result;
}

/** A database id as a number. */
export function decodeId(value: unknown): number {
  return decodeInteger(value, 'an id');
}

/** Money in integer minor units for a BIGINT / INTEGER column; a float or an unsafe integer is refused. */
export function encodeMoney(value: number): number {
  if (!Number.isSafeInteger(value)) throw corrupt('money that is not a safe integer of minor units', value);
  return value;
}

/** Money read from a BIGINT / INTEGER column, in integer minor units. */
export function decodeMoney(value: unknown): number {
  return decodeInteger(value, 'money');
}

/** An exact decimal for a TEXT (SQLite) or NUMERIC (Postgres) column. Never a float. */
export function encodeDecimal(value: string): string {
  if (typeof value !== 'string' || !DECIMAL_TEXT.test(value)) throw corrupt('a decimal', value);
  return value;
}

/** An exact decimal read back, as the string the database holds. */
export function decodeDecimal(value: unknown): string {
  if (typeof value !== 'string' || !DECIMAL_TEXT.test(value)) throw corrupt('a decimal', value);
  return value;
}

/** A boolean read from INTEGER 0/1 (SQLite) or boolean (Postgres). */
export function decodeBoolean(value: unknown): boolean {
  if (value === true || value === 1 || value === 1n) return true;
  if (value === false || value === 0 || value === 0n) return false;
  throw corrupt('a boolean', value);
}

/**
 * An instant read back: epoch ms (SQLite), a Date (pg's timestamptz parser) or an ISO / epoch
 * string (aggregates, other drivers). Always a fresh Date.
 */
export function decodeInstant(value: unknown): Date {
  let ms: number;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'number' || typeof value === 'bigint') ms = Number(value);
  else if (typeof value === 'string') ms = INTEGER_TEXT.test(value) ? Number(value) : Date.parse(value);
  else ms = Number.NaN;
  if (!Number.isSafeInteger(ms)) throw corrupt('an instant', value);
  return new Date(ms);
}

/** A nullable instant read back. */
export function decodeNullableInstant(value: unknown): Date | null {
  return value === null || value === undefined ? null : decodeInstant(value);
}

/** A JSON document as a JSON string for TEXT / jsonb. */
export function encodeJson(value: unknown): string {
  const text = JSON.stringify(value === undefined ? null : value);
  if (text === undefined) throw corrupt('a value to JSON', value);
  return text;
}

/** A JSON array of strings read back (TEXT from SQLite, already parsed jsonb from pg). */
export function decodeJsonStringArray(value: unknown): string[] {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw new BillingError('storage', 'Cannot parse a stored JSON document.', { cause: error });
    }
  }
  if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')) return parsed;
  throw corrupt('a JSON list of strings', value);
}

/**
 * A JSON object read back: SQLite returns the TEXT, pg returns jsonb already parsed (a fresh
 * object per query, so no copy is needed).
 */
export function decodeJsonObject(value: unknown): Record<string, unknown> {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw new BillingError('storage', 'Cannot parse a stored JSON document.', { cause: error });
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw corrupt('a JSON object', value);
  return parsed as Record<string, unknown>;
}
