import { endOfLocalDay, parseLocalDate } from '../domain/time/local-day.js';
import { parseInstant } from '../domain/time/parse-instant.js';
import { BillingError, invalid, notFound, ValidationCollector } from '../errors.js';
import type { AddressFields, CustomerFilter, CustomerRecord, StorageTransaction } from '../ports/storage.js';
import type { CommandContext } from './command-runner.js';
import { type CommandDeps, runCommand } from './command-runner.js';
import { loadSite } from './site-lookup.js';

/** Input of a customer (`customer_attributes`). */
export interface CustomerInput {
  readonly firstName?: string;
  readonly lastName?: string;
  readonly email?: string;
  readonly reference?: string | null;
  readonly organization?: string | null;
  readonly phone?: string | null;
  readonly address?: Partial<AddressFields>;
}

/**
 * A customer list query (`GET /customers.json`), values as a client sends them: `q` searches names,
 * email, organization and reference (and a whole number the id); dates are local days in the
 * site's zone (`endDate` inclusive), datetimes override them; `direction` orders by id (default `asc`).
 */
export interface CustomerListQuery {
  readonly q?: string;
  readonly dateField?: string;
  readonly startDate?: string;
  readonly endDate?: string;
  readonly startDatetime?: string;
  readonly endDatetime?: string;
  readonly direction?: string;
  readonly page?: number;
  readonly perPage?: number;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Customers of one site. */
export class CustomerService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /** Creates a customer; `customer_create` is recorded. */
  create(subdomain: string, input: CustomerInput): Promise<CustomerRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      return insertCustomer(ctx, site.id, input);
    });
  }

  /**
   * Changes a customer; records `customer_update` when a field the service tracks changed (name,
   * organization, email, reference, address, phone). A taken reference is refused.
   */
  update(subdomain: string, id: number, input: CustomerInput): Promise<CustomerRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const current = await loadCustomer(ctx.tx, site.id, id);
      const merged: CustomerInput = {
        firstName: input.firstName ?? current.firstName,
        lastName: input.lastName ?? current.lastName,
        email: input.email ?? current.email,
        reference: input.reference !== undefined ? input.reference : current.reference,
        organization: input.organization !== undefined ? input.organization : current.organization,
        phone: input.phone !== undefined ? input.phone : current.phone,
        address: { ...current.address, ...input.address },
      };
      validateCustomerInput(merged).throwIfAny();
      const patch = {
        firstName: merged.firstName!.trim(),
        lastName: merged.lastName!.trim(),
        email: merged.email!.trim(),
        reference: nonBlank(merged.reference) ? merged.reference!.trim() : null,
        organization: merged.organization ?? null,
        phone: merged.phone ?? null,
        address: { ...current.address, ...input.address },
      };
      let updated: CustomerRecord | undefined;
      try {
        updated = await ctx.tx.customers.updateAtVersion(site.id, id, current.version, {
          ...patch,
          updatedAt: ctx.now,
        });
      } catch (error) {
        if (error instanceof BillingError && error.code === 'conflict')
          throw invalid('Reference: must be unique - that value has been taken.', 'customer.reference');
        throw error;
      }
      if (!updated) throw new BillingError('conflict', 'The customer was changed by another request; try again.');
      const changed = (Object.keys(patch) as (keyof typeof patch)[]).filter(
        (key) => JSON.stringify(patch[key]) !== JSON.stringify(current[key]),
      );
      if (changed.length > 0) {
        ctx.record({
          siteId: site.id,
          key: 'customer_update',
          subjectType: 'customer',
          subjectId: id,
          payload: { customer: { id }, changed },
        });
      }
      return updated;
    });
  }

  /** One page of the site's customers by id (page is 1-based; per page defaults to 50, at most 200). */
  list(subdomain: string, page = 1, perPage = 50): Promise<CustomerRecord[]> {
    return this.#deps.storage.transaction(
      async (tx) => {
        const site = await loadSite(tx, subdomain);
        return tx.customers.list(site.id, clampPage(page, perPage));
      },
      { readOnly: true },
    );
  }

  /**
   * One page of the site's customers matching `query`: a search text (`q`), a date range on
   * `created_at` or `updated_at` (local days in the site's zone, or instants that override them) and
   * the id order. Paging is clamped as on every list; bad filters are a validation error.
   */
  search(subdomain: string, query: CustomerListQuery = {}): Promise<CustomerRecord[]> {
    return this.#deps.storage.transaction(
      async (tx) => {
        const site = await loadSite(tx, subdomain);
        const errors = new ValidationCollector();
        if (query.direction !== undefined && query.direction !== 'asc' && query.direction !== 'desc')
          errors.add('Direction: must be asc or desc.', 'direction');
        if (query.dateField !== undefined && query.dateField !== 'created_at' && query.dateField !== 'updated_at')
          errors.add('Date field: must be created_at or updated_at.', 'date_field');
        const start =
          query.startDatetime !== undefined
            ? errors.capture(() => parseInstant(query.startDatetime, site.timeZone, 'Start datetime'))
            : query.startDate !== undefined
              ? errors.capture(() => parseLocalDate(query.startDate, site.timeZone, 'Start date'))
              : undefined;
        const end =
          query.endDatetime !== undefined
            ? errors.capture(() => parseInstant(query.endDatetime, site.timeZone, 'End datetime'))
            : query.endDate !== undefined
              ? errors.capture(() =>
                  endOfLocalDay(parseLocalDate(query.endDate, site.timeZone, 'End date'), site.timeZone),
                )
              : undefined;
        errors.throwIfAny();
        const search = query.q?.trim();
        const filter: CustomerFilter = {
          ...(search === undefined || search === '' ? {} : { search }),
          ...(query.dateField === undefined ? {} : { dateField: query.dateField as 'created_at' | 'updated_at' }),
          ...(start === undefined ? {} : { start }),
          ...(end === undefined ? {} : { end }),
          ...(query.direction === undefined ? {} : { direction: query.direction as 'asc' | 'desc' }),
        };
        return tx.customers.list(site.id, clampPage(query.page, query.perPage, 50), filter);
      },
      { readOnly: true },
    );
  }

  /** The customer with this reference (exact); `not_found` when none has it. */
  lookup(subdomain: string, reference: string): Promise<CustomerRecord> {
    return this.#deps.storage.transaction(
      async (tx) => {
        const site = await loadSite(tx, subdomain);
        const found =
          typeof reference === 'string' ? await tx.customers.findByReference(site.id, reference) : undefined;
        if (!found) throw notFound('Customer', reference);
        return found;
      },
      { readOnly: true },
    );
  }

  /** Deletes a customer that has no subscriptions. */
  delete(subdomain: string, id: number): Promise<void> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await loadCustomer(ctx.tx, site.id, id);
      if ((await ctx.tx.subscriptions.countForCustomer(site.id, id)) > 0) {
        throw invalid('Customer: cannot be deleted while it has subscriptions.', 'customer');
      }
      await ctx.tx.customers.delete(site.id, id);
    });
  }

  /** A customer by id; `not_found` when missing. */
  get(subdomain: string, id: number): Promise<CustomerRecord> {
    return this.#deps.storage.transaction(async (tx) => loadCustomer(tx, (await loadSite(tx, subdomain)).id, id), {
      readOnly: true,
    });
  }
}

/** Validates and inserts a customer inside a command (also used by subscription signup). */
export async function insertCustomer(
  ctx: CommandContext,
  siteId: number,
  input: CustomerInput,
): Promise<CustomerRecord> {
  validateCustomerInput(input).throwIfAny();
  try {
    const customer = await ctx.tx.customers.insert({
      siteId,
      firstName: input.firstName!.trim(),
      lastName: input.lastName!.trim(),
      email: input.email!.trim(),
      reference: nonBlank(input.reference) ? input.reference!.trim() : null,
      organization: input.organization ?? null,
      phone: input.phone ?? null,
      address: {
        address: input.address?.address ?? null,
        address2: input.address?.address2 ?? null,
        city: input.address?.city ?? null,
        state: input.address?.state ?? null,
        zip: input.address?.zip ?? null,
        country: input.address?.country ?? null,
      },
      createdAt: ctx.now,
      updatedAt: ctx.now,
    });
    ctx.record({
      siteId,
      key: 'customer_create',
      subjectType: 'customer',
      subjectId: customer.id,
      payload: { customer: { id: customer.id } },
    });
    return customer;
  } catch (error) {
    if (error instanceof BillingError && error.code === 'conflict')
      throw invalid('Reference: must be unique - that value has been taken.', 'customer.reference');
    throw error;
  }
}

/** The problems of a customer input, collected (a signup checks them before it charges anything). */
export function validateCustomerInput(input: CustomerInput, errors = new ValidationCollector()): ValidationCollector {
  if (!nonBlank(input.firstName)) errors.add('First name: cannot be blank.', 'customer.first_name');
  if (!nonBlank(input.lastName)) errors.add('Last name: cannot be blank.', 'customer.last_name');
  if (!nonBlank(input.email)) errors.add('Email address: cannot be blank.', 'customer.email');
  else if (!EMAIL.test(input.email!.trim()))
    errors.add('Email address: must be a valid email address.', 'customer.email');
  return errors;
}

/** A customer inside a transaction; `not_found` when missing. */
export async function loadCustomer(tx: StorageTransaction, siteId: number, id: number): Promise<CustomerRecord> {
  const customer = await tx.customers.findById(siteId, id);
  if (!customer) throw notFound('Customer', id);
  return customer;
}

/** A 1-based page with per-page clamped to 1..200, as the service does. */
export function clampPage(page: unknown, perPage: unknown, defaultPerPage = 20): { page: number; perPage: number } {
  const p = Number(page);
  const n = Number(perPage);
  return {
    page: Number.isSafeInteger(p) && p >= 1 ? p : 1,
    perPage: Number.isSafeInteger(n) && n >= 1 ? Math.min(n, 200) : defaultPerPage,
  };
}

function nonBlank(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const CUSTOMER_METHODS = ['create', 'get', 'update', 'list', 'delete', 'search', 'lookup'] as const;
