import { notFound, ValidationCollector } from '../errors.js';
import type { ExportKind, ExportRecord, StorageTransaction } from '../ports/storage.js';
import { runCommand } from './command-runner.js';
import { loadSite } from './site-lookup.js';
import type { SubscriptionDeps } from './subscription-service.js';

/** Input of {@link ExportService.rows}: 1-based `page`, `perPage` clamped to 1..200 (default 100). */
export interface ExportRowsInput {
  readonly page?: number | string;
  readonly perPage?: number | string;
}

/**
 * One exported row: the record it names, as it was listed when the job ran (a subscription by
 * `id`, an invoice or proforma invoice by `uid`). Callers read the record itself for the row's fields.
 */
export type ExportRow = { readonly id: number } | { readonly uid: string };

const BATCH = 200;
const DEFAULT_PER_PAGE = 100;
const MAX_PER_PAGE = 200;

/**
 * Exports of a site's subscriptions, invoices and proforma invoices, as batch jobs with a status and pages of rows.
 *
 * A job is created `pending` in one transaction and completed in the next, in the same call: the
 * engine has no due-work kind for exports yet, and listing a site's ids is bounded work (one
 * indexed scan in pages of 200), unlike building every record's full row, which the rows read
 * does a page at a time. A job whose completion failed stays `pending` and is completed by the
 * next read of its status. The rows name the records that existed when the job ran, in id order;
 * a record cleared since then is left out of its page.
 */
export class ExportService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /** The storage, clock and gateway the commands run on. */
  protected get deps(): SubscriptionDeps {
    return this.#deps;
  }

  /** Starts (and runs) an export of every subscription of the site. */
  exportSubscriptions(subdomain: string): Promise<ExportRecord> {
    return this.#start(subdomain, 'subscriptions');
  }

  /** Starts (and runs) an export of every invoice of the site, drafts included. */
  exportInvoices(subdomain: string): Promise<ExportRecord> {
    return this.#start(subdomain, 'invoices');
  }

  /** Starts (and runs) an export of every proforma invoice of the site, voided ones included. */
  exportProformaInvoices(subdomain: string): Promise<ExportRecord> {
    return this.#start(subdomain, 'proforma_invoices');
  }

  /** A job of this kind; `not_found` for another kind's or another site's. Completes a job left pending. */
  async read(subdomain: string, kind: ExportKind, batchId: number): Promise<ExportRecord> {
    const job = await this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      return loadJob(tx, site.id, kind, batchId);
    });
    return job.status === 'pending' ? this.#complete(job) : job;
  }

  /** One page of a completed job's rows, in the order they were listed (oldest first); [] past the end. */
  async rows(subdomain: string, kind: ExportKind, batchId: number, input: ExportRowsInput = {}): Promise<ExportRow[]> {
    const job = await this.read(subdomain, kind, batchId);
    const errors = new ValidationCollector();
    const page = positiveInteger(input.page, 1, 'Page', errors);
    const perPage = Math.min(MAX_PER_PAGE, positiveInteger(input.perPage, DEFAULT_PER_PAGE, 'Per page', errors));
    errors.throwIfAny();
    const rows = await this.#deps.storage.transaction((tx) => tx.exports.rows(job.siteId, job.id, { page, perPage }));
    return rows.flatMap((row): ExportRow[] => {
      if (typeof row.id === 'number') return [{ id: row.id }];
      if (typeof row.uid === 'string') return [{ uid: row.uid }];
      return [];
    });
  }

  async #start(subdomain: string, kind: ExportKind): Promise<ExportRecord> {
    const job = await runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      return ctx.tx.exports.insert({ siteId: site.id, kind, createdAt: ctx.now });
    });
    return this.#complete(job);
  }

  /** Lists the job's records and completes it; a job completed meanwhile is returned as it is. */
  #complete(job: ExportRecord): Promise<ExportRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const rows: Record<string, unknown>[] = [];
      if (job.kind === 'subscriptions') {
        for (let page = 1; ; page += 1) {
          const batch = await ctx.tx.subscriptions.list(job.siteId, { direction: 'asc' }, { page, perPage: BATCH });
          for (const s of batch) rows.push({ id: s.id });
          if (batch.length < BATCH) break;
        }
      } else if (job.kind === 'proforma_invoices') {
        for (let offset = 0; ; offset += BATCH) {
          const { proformaInvoices } = await ctx.tx.proformaInvoices.list(job.siteId, {
            direction: 'asc',
            offset,
            limit: BATCH,
          });
          for (const p of proformaInvoices) rows.push({ uid: p.uid });
          if (proformaInvoices.length < BATCH) break;
        }
      } else {
        for (let offset = 0; ; offset += BATCH) {
          const { invoices } = await ctx.tx.invoices.list(job.siteId, { direction: 'asc', offset, limit: BATCH });
          for (const i of invoices) rows.push({ uid: i.uid });
          if (invoices.length < BATCH) break;
        }
      }
      const done = await ctx.tx.exports.complete(job.siteId, job.id, rows, ctx.now);
      return done ?? (await loadJob(ctx.tx, job.siteId, job.kind, job.id));
    });
  }
}

async function loadJob(tx: StorageTransaction, siteId: number, kind: ExportKind, id: number): Promise<ExportRecord> {
  const job = Number.isSafeInteger(id) ? await tx.exports.findById(siteId, id) : undefined;
  if (job === undefined || job.kind !== kind) throw notFound('Export', id);
  return job;
}

function positiveInteger(
  value: number | string | undefined,
  fallback: number,
  label: string,
  errors: ValidationCollector,
): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    errors.add(`${label}: must be a positive integer.`);
    return fallback;
  }
  return n;
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const EXPORT_METHODS = [
  'exportSubscriptions',
  'exportInvoices',
  'exportProformaInvoices',
  'read',
  'rows',
] as const;
