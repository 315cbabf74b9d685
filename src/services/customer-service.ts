import { invalid, notFound, ValidationCollector, BillingError } from '../errors.js';
import type { AddressFields, CustomerRecord, StorageTransaction } from '../ports/storage.js';
import type { CommandContext } from './command-runner.js';
import { type CommandDeps, runCommand } from './command-runner.js';
import { loadSite } from './site-service.js';

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

  /** A customer by id; `not_found` when missing. */
  get(subdomain: string, id: number): Promise<CustomerRecord> {
    return this.#deps.storage.transaction(async (tx) => loadCustomer(tx, (await loadSite(tx, subdomain)).id, id));
  }
}

/** Validates and inserts a customer inside a command (also used by subscription signup). */
export async function insertCustomer(ctx: CommandContext, siteId: number, input: CustomerInput): Promise<CustomerRecord> {
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
    ctx.record({ siteId, key: 'customer_create', subjectType: 'customer', subjectId: customer.id, payload: { customer: { id: customer.id } } });
    return customer;
  } catch (error) {
    if (error instanceof BillingError && error.code === 'conflict') throw invalid('Reference: must be unique - that value has been taken.', 'customer.reference');
    throw error;
  }
}

/** The problems of a customer input, collected (a signup checks them before it charges anything). */
export function validateCustomerInput(input: CustomerInput, errors = new ValidationCollector()): ValidationCollector {
  if (!nonBlank(input.firstName)) errors.add('First name: cannot be blank.', 'customer.first_name');
  if (!nonBlank(input.lastName)) errors.add('Last name: cannot be blank.', 'customer.last_name');
  if (!nonBlank(input.email)) errors.add('Email address: cannot be blank.', 'customer.email');
  else if (!EMAIL.test(input.email!.trim())) errors.add('Email address: must be a valid email address.', 'customer.email');
  return errors;
}

/** A customer inside a transaction; `not_found` when missing. */
export async function loadCustomer(tx: StorageTransaction, siteId: number, id: number): Promise<CustomerRecord> {
  const customer = await tx.customers.findById(siteId, id);
  if (!customer) throw notFound('Customer', id);
  return customer;
}

function nonBlank(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}
