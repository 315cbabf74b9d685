import { BillingError, invalid, notFound, ValidationCollector } from '../errors.js';
import type { ReasonCodeRecord, StorageTransaction } from '../ports/storage.js';
import { type CommandDeps, runCommand } from './command-runner.js';
import { clampPage } from './customer-service.js';
import { loadSite } from './site-lookup.js';
import type { SubscriptionDeps } from './subscription-service.js';

/** Input of {@link ReasonCodeService.create}; on update every field is optional. */
export interface ReasonCodeInput {
  /** Required on create: the code itself (`CH1`, `TOO_EXPENSIVE`); unique per site in any letter case. */
  readonly code?: unknown;
  /** Required on create: what the code means. */
  readonly description?: unknown;
  /** Where it is listed (lower first); after the last code when omitted on create. */
  readonly position?: unknown;
}

/** A page of the reason-code list: 20 a page by default, at most 200. */
export interface ListReasonCodesOptions {
  readonly page?: number;
  readonly perPage?: number;
}

/** Longest code and description kept; longer ones are refused, not cut. */
const MAX_CODE_LENGTH = 255;
const MAX_DESCRIPTION_LENGTH = 1000;

/**
 * Churn reason codes of a site: why customers cancel. A cancellation may name one
 * (`reason_code`), which must then be a code of the site. Deleting a code leaves the
 * cancellations that named it as they are.
 */
export class ReasonCodeService {
  readonly #deps: CommandDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /** The storage, clock and gateway the commands run on. */
  protected get deps(): CommandDeps {
    return this.#deps;
  }

  /** Adds a code; 422 when the code or description is blank, or the code is taken. */
  create(subdomain: string, input: ReasonCodeInput): Promise<ReasonCodeRecord> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const errors = new ValidationCollector();
      const code = readCode(input.code, errors);
      const description = readDescription(input.description, errors);
      const position =
        input.position === undefined || input.position === null ? undefined : readPosition(input.position, errors);
      errors.throwIfAny();
      return mapCodeTaken(
        tx.reasonCodes.insert({
          siteId: site.id,
          code: code as string,
          description: description as string,
          position: position ?? (await lastPosition(tx, site.id)) + 1,
          createdAt: now,
          updatedAt: now,
        }),
      );
    });
  }

  /** One page of the site's codes by position (then id). */
  list(subdomain: string, options: ListReasonCodesOptions = {}): Promise<ReasonCodeRecord[]> {
    const page = clampPage(options.page, options.perPage);
    return this.#deps.storage.transaction(async (tx) => tx.reasonCodes.list((await loadSite(tx, subdomain)).id, page));
  }

  /** A code by id; `not_found` when missing. */
  get(subdomain: string, id: number): Promise<ReasonCodeRecord> {
    return this.#deps.storage.transaction(async (tx) => loadReasonCode(tx, (await loadSite(tx, subdomain)).id, id));
  }

  /** Changes the fields given; the same rules as create for each. */
  update(subdomain: string, id: number, input: ReasonCodeInput): Promise<ReasonCodeRecord> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      await loadReasonCode(tx, site.id, id);
      const errors = new ValidationCollector();
      const code = input.code === undefined ? undefined : readCode(input.code, errors);
      const description = input.description === undefined ? undefined : readDescription(input.description, errors);
      const position = input.position === undefined ? undefined : readPosition(input.position, errors);
      errors.throwIfAny();
      const updated = await mapCodeTaken(
        tx.reasonCodes.update(site.id, id, {
          ...(code === undefined ? {} : { code }),
          ...(description === undefined ? {} : { description }),
          ...(position === undefined ? {} : { position }),
          updatedAt: now,
        }),
      );
      if (!updated) throw notFound('Reason code', id);
      return updated;
    });
  }

  /** Deletes a code; `not_found` when missing. */
  delete(subdomain: string, id: number): Promise<void> {
    return runCommand(this.#deps, async ({ tx }) => {
      const site = await loadSite(tx, subdomain);
      if (!(await tx.reasonCodes.delete(site.id, id))) throw notFound('Reason code', id);
    });
  }
}

/** A reason code by id; `not_found` when missing. */
export async function loadReasonCode(tx: StorageTransaction, siteId: number, id: number): Promise<ReasonCodeRecord> {
  const code = await tx.reasonCodes.findById(siteId, id);
  if (!code) throw notFound('Reason code', id);
  return code;
}

/**
 * The site's reason code a cancellation names, as stored (the site's spelling), or null when none
 * is named (absent, null or blank). A code the site does not have is a 422, so a typo is not
 * kept as a churn reason.
 */
export async function reasonCodeForCancellation(
  tx: StorageTransaction,
  siteId: number,
  reasonCode: unknown,
): Promise<string | null> {
  if (reasonCode === undefined || reasonCode === null) return null;
  if (typeof reasonCode !== 'string') throw invalid('Reason code: must be a string.', 'reason_code');
  if (reasonCode.trim() === '') return null;
  const found = await tx.reasonCodes.findByCode(siteId, reasonCode.trim());
  if (found) return found.code;
  // A site that keeps no reason codes takes the code as the client's own text, as it did before
  // reason codes existed; once it keeps some, a cancellation must name one of them.
  const kept = await tx.reasonCodes.list(siteId, { page: 1, perPage: 1 });
  if (kept.length === 0) return reasonCode.trim();
  throw invalid(`Reason code: '${reasonCode}' is not a reason code of this site.`, 'reason_code');
}

/** The highest position in use, or 0 when the site has no codes. */
async function lastPosition(tx: StorageTransaction, siteId: number): Promise<number> {
  let last = 0;
  for (let page = 1; ; page += 1) {
    const rows = await tx.reasonCodes.list(siteId, { page, perPage: 200 });
    for (const row of rows) last = Math.max(last, row.position);
    if (rows.length < 200) return last;
  }
}

function readCode(value: unknown, errors: ValidationCollector): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') {
    errors.add('Code: cannot be blank.', 'code');
    return undefined;
  }
  const code = value.trim();
  if (code.length > MAX_CODE_LENGTH) {
    errors.add(`Code: is too long (maximum is ${MAX_CODE_LENGTH} characters).`, 'code');
    return undefined;
  }
  return code;
}

function readDescription(value: unknown, errors: ValidationCollector): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') {
    errors.add('Description: cannot be blank.', 'description');
    return undefined;
  }
  if (value.length > MAX_DESCRIPTION_LENGTH) {
    errors.add(`Description: is too long (maximum is ${MAX_DESCRIPTION_LENGTH} characters).`, 'description');
    return undefined;
  }
  return value.trim();
}

function readPosition(value: unknown, errors: ValidationCollector): number | undefined {
  const parsed =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*\d+\s*$/.test(value)
        ? Number(value)
        : Number.NaN;
  // Positions are small whole numbers; 32 bits is what the column holds on Postgres.
  if (!Number.isSafeInteger(parsed) || parsed < 0 || parsed > 2_147_483_647) {
    errors.add('Position: must be a whole number, 0 or more.', 'position');
    return undefined;
  }
  return parsed;
}

async function mapCodeTaken<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof BillingError && error.code === 'conflict')
      throw invalid('Code: has already been taken.', 'code');
    throw error;
  }
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const REASON_CODE_METHODS = ['create', 'list', 'get', 'update', 'delete'] as const;
