/**
 * Every failure the engine reports is a {@link BillingError} with a `code` from one closed union.
 * The code decides the HTTP status and the direct-post `result_code` (one table, below), so the
 * HTTP binding and the direct-post interface never invent their own mapping.
 */

/** The closed set of error codes. Adding one means adding a row to {@link ERROR_TABLE}. */
export type BillingErrorCode =
  | 'validation'
  | 'not_found'
  | 'invalid_transition'
  | 'conflict'
  | 'duplicate_submission'
  | 'payment_declined'
  | 'gateway_error'
  | 'unauthorized'
  | 'nonce_missing'
  | 'rate_limited'
  | 'storage'
  | 'internal';

/**
 * One problem found in a command's input or state. `message` is in the service's style
 * ("Memo: cannot be blank."); `attribute` names the input it is about when there is one
 * (`payment_profile.expiration_month`), as direct-post call records report it.
 */
export interface BillingErrorDetail {
  readonly message: string;
  readonly attribute?: string;
  /** Extra fields some service error bodies carry (allocation errors: `kind`, `component_id`, `on`). */
  readonly extra?: Readonly<Record<string, string | number>>;
}

/**
 * How the service shapes this error's JSON body. Most are `list` (`{"errors":["..."]}`); a few
 * documented endpoints use a bare string, a singular `error` key, a map or a list of objects.
 */
export type ErrorBodyShape = 'list' | 'string' | 'single' | 'map' | 'objects' | 'plain';

/** HTTP status and direct-post result code of one error code. */
export interface ErrorMapping {
  readonly httpStatus: number;
  readonly resultCode: string;
}

/** The one table from error code to HTTP status and direct-post `result_code`. */
export const ERROR_TABLE: Readonly<Record<BillingErrorCode, ErrorMapping>> = {
  validation: { httpStatus: 422, resultCode: '4220' },
  invalid_transition: { httpStatus: 422, resultCode: '4220' },
  not_found: { httpStatus: 404, resultCode: '4040' },
  conflict: { httpStatus: 409, resultCode: '5000' },
  duplicate_submission: { httpStatus: 409, resultCode: '4221' },
  payment_declined: { httpStatus: 422, resultCode: '4300' },
  gateway_error: { httpStatus: 422, resultCode: '5000' },
  unauthorized: { httpStatus: 401, resultCode: '4001' },
  nonce_missing: { httpStatus: 401, resultCode: '4011' },
  rate_limited: { httpStatus: 429, resultCode: '5000' },
  storage: { httpStatus: 500, resultCode: '5000' },
  internal: { httpStatus: 500, resultCode: '5000' },
};

/** Options for constructing a {@link BillingError}. */
export interface BillingErrorOptions {
  readonly details?: readonly BillingErrorDetail[];
  readonly shape?: ErrorBodyShape;
  readonly data?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

/**
 * The engine's only error class. `message` joins the detail messages; `details` keeps them one by
 * one; `data` carries machine-readable context (ids, limits); `cause` keeps a driver or gateway error.
 */
export class BillingError extends Error {
  override readonly name = 'BillingError';
  readonly code: BillingErrorCode;
  readonly details: readonly BillingErrorDetail[];
  readonly shape: ErrorBodyShape;
  readonly data: Readonly<Record<string, unknown>>;

  constructor(code: BillingErrorCode, message: string, options: BillingErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details && options.details.length > 0 ? options.details : [{ message }];
    this.shape = options.shape ?? 'list';
    this.data = options.data ?? {};
  }

  /** The HTTP status of this error, from {@link ERROR_TABLE}. */
  get httpStatus(): number {
    return ERROR_TABLE[this.code].httpStatus;
  }

  /** The direct-post `result_code` of this error, from {@link ERROR_TABLE}. */
  get resultCode(): string {
    return ERROR_TABLE[this.code].resultCode;
  }

  /** The detail messages, in order. */
  get messages(): string[] {
    return this.details.map((d) => d.message);
  }
}

/** True when `value` is a {@link BillingError}, optionally of one code. */
export function isBillingError(value: unknown, code?: BillingErrorCode): value is BillingError {
  return value instanceof BillingError && (code === undefined || value.code === code);
}

/** A validation error from one or more details; the message joins them. */
export function validationError(details: readonly BillingErrorDetail[], shape: ErrorBodyShape = 'list'): BillingError {
  return new BillingError('validation', details.map((d) => d.message).join(' '), { details, shape });
}

/** A validation error with a single message and optional attribute. */
export function invalid(message: string, attribute?: string): BillingError {
  return validationError([attribute === undefined ? { message } : { message, attribute }]);
}

/** A not-found error naming the kind of record and its id. */
/**
 * The refusal of a write that would take a subscription's balance beyond what is kept exactly
 * (a safe integer of minor units, about 90 trillion major units). Storage adapters throw it
 * inside the writing transaction, so the command changes nothing and the subscription keeps
 * working: every later command still reads a balance it can represent.
 */
export function balanceOutOfRange(subscriptionId: number): BillingError {
  return invalid(
    `Amount: would take the balance of subscription ${subscriptionId} beyond ${Number.MAX_SAFE_INTEGER} minor units, the largest amount kept exactly.`,
    'amount',
  );
}

export function notFound(what: string, id?: string | number): BillingError {
  const message = id === undefined ? `${what} not found.` : `${what} ${id} not found.`;
  return new BillingError('not_found', message, { data: id === undefined ? { what } : { what, id } });
}

/**
 * Collects validation problems so that a command reports all of them at once, the way the
 * service does (`{"errors":["Memo: cannot be blank.","Amount: is not a number."]}`).
 */
export class ValidationCollector {
  readonly #details: BillingErrorDetail[] = [];

  /** Records one problem. */
  add(message: string, attribute?: string): this {
    this.#details.push(attribute === undefined ? { message } : { message, attribute });
    return this;
  }

  /** Runs `check`, recording its BillingError details instead of throwing; returns its result or undefined. */
  capture<T>(check: () => T): T | undefined {
    try {
      return check();
    } catch (error) {
      if (error instanceof BillingError && (error.code === 'validation' || error.code === 'not_found')) {
        this.#details.push(...error.details);
        return undefined;
      }
      throw error;
    }
  }

  /** True when nothing has been recorded. */
  get ok(): boolean {
    return this.#details.length === 0;
  }

  /** Throws a validation error with everything recorded, if anything was. */
  throwIfAny(): void {
    if (this.#details.length > 0) throw validationError(this.#details);
  }
}

/**
 * A whole number greater than 0 given as a number or a digit string (`3`, `"3"`); otherwise
 * records "<field>: must be a whole number greater than 0." and returns undefined, so that a
 * command can report every problem at once.
 */
export function positiveWholeNumber(
  value: unknown,
  field: string,
  attribute: string,
  errors: ValidationCollector,
): number | undefined {
  const parsed =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*\d+\s*$/.test(value)
        ? Number(value)
        : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < 1) {
    errors.add(`${field}: must be a whole number greater than 0.`, attribute);
    return undefined;
  }
  return parsed;
}
