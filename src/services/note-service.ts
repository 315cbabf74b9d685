import { notFound, ValidationCollector } from '../errors.js';
import type { NoteRecord, StorageTransaction } from '../ports/storage.js';
import { type CommandDeps, runCommand } from './command-runner.js';
import { loadSite } from './site-lookup.js';
import { loadSubscription } from './subscription-service.js';
import { claimUniquenessToken } from './uniqueness.js';

/** Input of {@link NoteService.create}. */
export interface NoteInput {
  /** Required: unstructured text. */
  readonly body?: string | null;
  /** Shown prominently on the subscription; default false. */
  readonly sticky?: boolean | null;
  /** Duplicate prevention. */
  readonly uniquenessToken?: string | null;
}

/** Input of {@link NoteService.update}: only the fields given change. */
export type NoteUpdateInput = NoteInput;

/** Notes on subscriptions: create, list, read, update and delete, each scoped to its subscription. */
export class NoteService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /** Adds a note to a subscription. "Body: cannot be blank." when the body is missing or blank. */
  create(subdomain: string, subscriptionId: number, input: NoteInput): Promise<NoteRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await claimUniquenessToken(ctx, site.id, input.uniquenessToken);
      await loadSubscription(ctx.tx, site.id, subscriptionId);
      const errors = new ValidationCollector();
      const body = readBody(input.body, errors);
      const sticky = readSticky(input.sticky, errors);
      errors.throwIfAny();
      return ctx.tx.notes.insert({
        siteId: site.id,
        subscriptionId,
        body: body!,
        sticky: sticky ?? false,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      });
    });
  }

  /** The subscription's notes, oldest first; `not_found` for an unknown subscription. */
  list(subdomain: string, subscriptionId: number): Promise<NoteRecord[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      await loadSubscription(tx, site.id, subscriptionId);
      return tx.notes.listForSubscription(site.id, subscriptionId);
    });
  }

  /** One note of the subscription; `not_found` when it is missing or belongs to another subscription. */
  get(subdomain: string, subscriptionId: number, noteId: number): Promise<NoteRecord> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      return loadNote(tx, site.id, subscriptionId, noteId);
    });
  }

  /** Changes the body and/or stickiness of a note; a given body must not be blank. */
  update(subdomain: string, subscriptionId: number, noteId: number, input: NoteUpdateInput): Promise<NoteRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await claimUniquenessToken(ctx, site.id, input.uniquenessToken);
      await loadNote(ctx.tx, site.id, subscriptionId, noteId);
      const errors = new ValidationCollector();
      const body = input.body === undefined ? undefined : readBody(input.body, errors);
      const sticky = readSticky(input.sticky, errors);
      errors.throwIfAny();
      const updated = await ctx.tx.notes.update(site.id, noteId, {
        ...(body === undefined ? {} : { body }),
        ...(sticky === undefined ? {} : { sticky }),
        updatedAt: ctx.now,
      });
      if (!updated) throw notFound('Note', noteId);
      return updated;
    });
  }

  /** Deletes a note of the subscription; `not_found` when it is missing or belongs to another subscription. */
  delete(subdomain: string, subscriptionId: number, noteId: number): Promise<void> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await loadNote(ctx.tx, site.id, subscriptionId, noteId);
      if (!(await ctx.tx.notes.delete(site.id, noteId))) throw notFound('Note', noteId);
    });
  }
}

/** A note of one subscription of the site; `not_found` otherwise (the subscription is checked first). */
async function loadNote(tx: StorageTransaction, siteId: number, subscriptionId: number, noteId: number) {
  await loadSubscription(tx, siteId, subscriptionId);
  const note = await tx.notes.findById(siteId, noteId);
  if (!note || note.subscriptionId !== subscriptionId) throw notFound('Note', noteId);
  return note;
}

function readBody(body: unknown, errors: ValidationCollector): string | undefined {
  if (typeof body !== 'string' || body.trim() === '') {
    errors.add('Body: cannot be blank.', 'note.body');
    return undefined;
  }
  return body;
}

function readSticky(sticky: unknown, errors: ValidationCollector): boolean | undefined {
  if (sticky === undefined || sticky === null) return undefined;
  if (typeof sticky !== 'boolean') {
    errors.add('Sticky: must be true or false.', 'note.sticky');
    return undefined;
  }
  return sticky;
}
