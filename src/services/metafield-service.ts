import { BillingError, invalid, notFound, ValidationCollector } from '../errors.js';
import type {
  MetadataRecord,
  MetafieldRecord,
  MetafieldResource,
  MetafieldScope,
  StorageTransaction,
} from '../ports/storage.js';
import { type CommandContext, type CommandDeps, runCommand } from './command-runner.js';
import { loadSite } from './site-lookup.js';

/** A resource type as callers may spell it: singular, or the plural of the service's paths. */
export type MetafieldResourceInput = MetafieldResource | 'customers' | 'subscriptions';

/** A scope flag as the wire sends it: `"1"`/`"0"`, 1/0 or a boolean. */
export type ScopeFlagInput = boolean | '0' | '1' | 0 | 1;

/** Where a field shows; omitted flags are off, omitted `hosted` is no hosted page. */
export interface MetafieldScopeInput {
  /** Hosted pages it shows on; `all` means every public page. */
  readonly hosted?: readonly (string | number)[];
  readonly csv?: ScopeFlagInput;
  readonly invoices?: ScopeFlagInput;
  readonly statements?: ScopeFlagInput;
  readonly portal?: ScopeFlagInput;
}

/** Input of a custom field. Dropdown and radio fields need their allowed values in `enum`. */
export interface MetafieldInput {
  readonly name?: string;
  readonly inputType?: MetafieldRecord['inputType'];
  readonly enum?: readonly string[] | null;
  readonly scope?: MetafieldScopeInput;
}

/** One value to set: the name of an existing field and a string value. */
export interface MetadataInput {
  readonly name: string;
  readonly value: string | number | boolean;
}

const INPUT_TYPES: readonly MetafieldRecord['inputType'][] = ['text', 'dropdown', 'radio'];

/**
 * Custom fields (metafields) on customers and subscriptions, and their values (metadata). A value
 * can be set only for a field that exists, and for a dropdown or radio field only to one of its
 * allowed values. Values are strings.
 */
export class MetafieldService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /** Creates one field or several at once; all are checked first, and none is created if any is wrong. */
  async createFields(
    subdomain: string,
    resourceType: MetafieldResourceInput,
    input: MetafieldInput | readonly MetafieldInput[],
  ): Promise<MetafieldRecord[]> {
    const resource = parseResource(resourceType);
    const inputs: readonly MetafieldInput[] = Array.isArray(input) ? input : [input as MetafieldInput];
    const errors = new ValidationCollector();
    if (inputs.length === 0) errors.add('Metafields: at least one is required.', 'metafields');
    const definitions = inputs.map((one) => fieldDefinition(one, undefined, errors));
    const names = definitions.map((d) => d.name);
    if (new Set(names).size !== names.length) errors.add('Name: must be unique - that value has been taken.', 'name');
    errors.throwIfAny();
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const created: MetafieldRecord[] = [];
      for (const definition of definitions) {
        created.push(
          await mapNameConflict(
            tx.metafields.insertField({
              siteId: site.id,
              resourceType: resource,
              name: definition.name as string,
              inputType: definition.inputType ?? 'text',
              enumValues: definition.enumValues ?? null,
              scope: definition.scope ?? defaultScope(),
              createdAt: now,
              updatedAt: now,
            }),
          ),
        );
      }
      return created;
    });
  }

  /**
   * Changes a field found by its current name: rename (its values follow), input type, allowed
   * values, scope. Values already stored are kept even if the new allowed values exclude them.
   */
  async updateField(
    subdomain: string,
    resourceType: MetafieldResourceInput,
    name: string,
    input: MetafieldInput,
  ): Promise<MetafieldRecord> {
    const [updated] = await this.updateFields(subdomain, resourceType, [{ name, input }]);
    return updated!;
  }

  /**
   * Updates several fields in one command (`PUT /{resource}/metafields.json` with a list): each is
   * applied in turn, so a later one sees the names the earlier ones gave; if any fails, none is kept.
   */
  async updateFields(
    subdomain: string,
    resourceType: MetafieldResourceInput,
    updates: readonly { readonly name: string; readonly input: MetafieldInput }[],
  ): Promise<MetafieldRecord[]> {
    const resource = parseResource(resourceType);
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const done: MetafieldRecord[] = [];
      for (const { name, input } of updates) {
        const current = await loadField(tx, site.id, resource, name);
        const errors = new ValidationCollector();
        const patch = fieldDefinition(input, current, errors);
        errors.throwIfAny();
        const updated = await mapNameConflict(
          tx.metafields.updateField(site.id, current.id, { ...patch, updatedAt: now }),
        );
        if (!updated) throw metafieldMissing(name);
        done.push(updated);
      }
      return done;
    });
  }

  /** Deletes a field and every value of it. */
  async deleteField(subdomain: string, resourceType: MetafieldResourceInput, name: string): Promise<void> {
    const resource = parseResource(resourceType);
    return runCommand(this.#deps, async ({ tx }) => {
      const site = await loadSite(tx, subdomain);
      const field = await loadField(tx, site.id, resource, name);
      if (!(await tx.metafields.deleteField(site.id, field.id))) throw metafieldMissing(name);
    });
  }

  /** The site's fields for a resource type, by id. */
  async listFields(subdomain: string, resourceType: MetafieldResourceInput): Promise<MetafieldRecord[]> {
    const resource = parseResource(resourceType);
    return this.#deps.storage.transaction(async (tx) =>
      tx.metafields.listFields((await loadSite(tx, subdomain)).id, resource),
    );
  }

  /** Sets values on one customer or subscription (insert or replace); returns all its values, by name. */
  async setMetadata(
    subdomain: string,
    resourceType: MetafieldResourceInput,
    resourceId: number,
    values: readonly MetadataInput[],
  ): Promise<MetadataRecord[]> {
    const resource = parseResource(resourceType);
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await setMetadataInCommand(ctx, site.id, resource, resourceId, values);
      return ctx.tx.metafields.listValues(site.id, resource, resourceId);
    });
  }

  /**
   * Updates values on one resource. Like the service's `PUT .../metadata`, a value that is not set
   * yet is created, so this is {@link setMetadata} under the name clients look for.
   */
  async updateMetadata(
    subdomain: string,
    resourceType: MetafieldResourceInput,
    resourceId: number,
    values: readonly MetadataInput[],
  ): Promise<MetadataRecord[]> {
    return this.setMetadata(subdomain, resourceType, resourceId, values);
  }

  /** The values of one customer or subscription, by field name; `not_found` when the resource is missing. */
  async listMetadata(
    subdomain: string,
    resourceType: MetafieldResourceInput,
    resourceId: number,
  ): Promise<MetadataRecord[]> {
    const resource = parseResource(resourceType);
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      await assertResource(tx, site.id, resource, resourceId);
      return tx.metafields.listValues(site.id, resource, resourceId);
    });
  }

  /** Removes one value of a resource; `not_found` when it has no value for that field. */
  async deleteMetadata(
    subdomain: string,
    resourceType: MetafieldResourceInput,
    resourceId: number,
    name: string,
  ): Promise<void> {
    const resource = parseResource(resourceType);
    return runCommand(this.#deps, async ({ tx }) => {
      const site = await loadSite(tx, subdomain);
      await assertResource(tx, site.id, resource, resourceId);
      if (!(await tx.metafields.deleteValue(site.id, resource, resourceId, name))) {
        throw new BillingError('not_found', `Metadata: '${String(name)}' is not set.`, {
          data: { what: 'metadata', name },
        });
      }
    });
  }
}

/**
 * Checks metadata values without writing them (a signup checks them before it charges): each name
 * must be an existing field of the resource type ("Metafield: 'x' does not exist."), each value a
 * string (numbers and booleans count as their strings) and, for dropdown and radio fields, one of
 * the allowed values. Returns the fields with their values; throws every problem at once.
 */
export async function checkMetadataValues(
  tx: StorageTransaction,
  siteId: number,
  resource: MetafieldResource,
  values: readonly MetadataInput[],
): Promise<{ field: MetafieldRecord; value: string }[]> {
  const errors = new ValidationCollector();
  if (!Array.isArray(values)) throw invalid('Metadata: must be a list of name and value pairs.', 'metadata');
  const checked: { field: MetafieldRecord; value: string }[] = [];
  for (const entry of values) {
    const name = typeof entry?.name === 'string' ? entry.name.trim() : '';
    if (name === '') {
      errors.add('Name: cannot be blank.', 'metadata.name');
      continue;
    }
    const field = await tx.metafields.findField(siteId, resource, name);
    if (!field) {
      errors.add(`Metafield: '${name}' does not exist.`, 'metadata.name');
      continue;
    }
    const raw = entry.value;
    if (typeof raw !== 'string' && typeof raw !== 'boolean' && !(typeof raw === 'number' && Number.isFinite(raw))) {
      errors.add(`Value: must be a string for '${name}'.`, 'metadata.value');
      continue;
    }
    const value = String(raw);
    if (field.inputType !== 'text' && !(field.enumValues ?? []).includes(value)) {
      errors.add(`Value: '${value}' is not one of the allowed values for '${name}'.`, 'metadata.value');
      continue;
    }
    checked.push({ field, value });
  }
  errors.throwIfAny();
  return checked;
}

/**
 * Sets metadata values on a customer or subscription inside the caller's command (subscription
 * signup uses it). Every value is checked before any is written: the resource must exist, each
 * name must be an existing field ("Metafield: 'x' does not exist."), each value a string (numbers
 * and booleans are written as their strings) and, for dropdown and radio fields, one of the allowed
 * values. Returns the records written, in input order.
 */
export async function setMetadataInCommand(
  ctx: CommandContext,
  siteId: number,
  resourceType: MetafieldResource,
  resourceId: number,
  values: readonly MetadataInput[],
): Promise<MetadataRecord[]> {
  const { tx, now } = ctx;
  const resource = parseResource(resourceType);
  await assertResource(tx, siteId, resource, resourceId);
  const checked = await checkMetadataValues(tx, siteId, resource, values);
  const written: MetadataRecord[] = [];
  for (const { field, value } of checked) {
    written.push(
      await tx.metafields.setValue({
        siteId,
        resourceType: resource,
        resourceId,
        metafieldId: field.id,
        name: field.name,
        value,
        updatedAt: now,
        now,
      }),
    );
  }
  return written;
}

function parseResource(value: unknown): MetafieldResource {
  if (value === 'customer' || value === 'customers') return 'customer';
  if (value === 'subscription' || value === 'subscriptions') return 'subscription';
  throw invalid("Resource type: must be 'customer' or 'subscription'.", 'resource_type');
}

async function assertResource(
  tx: StorageTransaction,
  siteId: number,
  resource: MetafieldResource,
  resourceId: number,
): Promise<void> {
  const found =
    resource === 'customer'
      ? await tx.customers.findById(siteId, resourceId)
      : await tx.subscriptions.findById(siteId, resourceId);
  if (!found) throw notFound(resource === 'customer' ? 'Customer' : 'Subscription', resourceId);
}

async function loadField(
  tx: StorageTransaction,
  siteId: number,
  resource: MetafieldResource,
  name: string,
): Promise<MetafieldRecord> {
  const field = typeof name === 'string' ? await tx.metafields.findField(siteId, resource, name.trim()) : undefined;
  if (!field) throw metafieldMissing(name);
  return field;
}

function metafieldMissing(name: string): BillingError {
  return new BillingError('not_found', `Metafield: '${String(name)}' does not exist.`, {
    data: { what: 'metafield', name },
  });
}

function defaultScope(): MetafieldScope {
  return { hosted: [], csv: false, invoices: false, statements: false, portal: false };
}

type FieldDefinition = {
  -readonly [K in 'name' | 'inputType' | 'enumValues' | 'scope']?: MetafieldRecord[K];
};

/**
 * The definition an input asks for, checked: on create (`current` undefined) a name is required;
 * on update only what is sent changes. Dropdown and radio fields need at least one allowed value,
 * and a text field has none.
 */
function fieldDefinition(
  input: MetafieldInput,
  current: MetafieldRecord | undefined,
  errors: ValidationCollector,
): FieldDefinition {
  const definition: FieldDefinition = {};
  if (input.name !== undefined || !current) {
    if (typeof input.name !== 'string' || input.name.trim() === '') errors.add('Name: cannot be blank.', 'name');
    else definition.name = input.name.trim();
  }
  if (input.inputType !== undefined) {
    if (!INPUT_TYPES.includes(input.inputType))
      errors.add("Input type: must be 'text', 'dropdown' or 'radio'.", 'input_type');
    else definition.inputType = input.inputType;
  }
  if (input.enum !== undefined) {
    if (input.enum === null) definition.enumValues = null;
    else if (!Array.isArray(input.enum) || input.enum.some((v) => typeof v !== 'string' || v === '')) {
      errors.add('Enum: must be a list of non-blank strings.', 'enum');
    } else definition.enumValues = [...new Set(input.enum)];
  }
  const inputType = definition.inputType ?? current?.inputType ?? 'text';
  const enumValues = definition.enumValues === undefined ? (current?.enumValues ?? null) : definition.enumValues;
  if (inputType === 'text' && enumValues !== null && enumValues.length > 0) {
    if (input.enum !== undefined) errors.add('Enum: can only be set on dropdown and radio fields.', 'enum');
    // A field turned into text drops the allowed values it no longer uses.
    else definition.enumValues = null;
  }
  if (inputType !== 'text' && (enumValues === null || enumValues.length === 0)) {
    errors.add('Enum: cannot be blank for dropdown and radio fields.', 'enum');
  }
  if (input.scope !== undefined) {
    const scope = parseScope(input.scope, current?.scope ?? defaultScope(), errors);
    if (scope) definition.scope = scope;
  }
  return definition;
}

function parseScope(
  input: MetafieldScopeInput,
  base: MetafieldScope,
  errors: ValidationCollector,
): MetafieldScope | undefined {
  if (typeof input !== 'object' || input === null) {
    errors.add('Scope: must be an object.', 'scope');
    return undefined;
  }
  let hosted = base.hosted;
  if (input.hosted !== undefined) {
    if (
      !Array.isArray(input.hosted) ||
      input.hosted.some((h) => (typeof h !== 'string' && typeof h !== 'number') || String(h).trim() === '')
    ) {
      errors.add('Scope hosted: must be a list of hosted page ids or "all".', 'scope.hosted');
    } else {
      const pages = [...new Set(input.hosted.map((h) => String(h).trim()))];
      // `all` already covers every page; listing others beside it would say nothing more.
      hosted = pages.includes('all') ? ['all'] : pages;
    }
  }
  const flagOf = (value: ScopeFlagInput | undefined, fallback: boolean, name: string): boolean => {
    if (value === undefined) return fallback;
    if (value === true || value === '1' || value === 1) return true;
    if (value === false || value === '0' || value === 0) return false;
    errors.add(`Scope ${name}: must be "1" or "0".`, `scope.${name}`);
    return fallback;
  };
  return {
    hosted,
    csv: flagOf(input.csv, base.csv, 'csv'),
    invoices: flagOf(input.invoices, base.invoices, 'invoices'),
    statements: flagOf(input.statements, base.statements, 'statements'),
    portal: flagOf(input.portal, base.portal, 'portal'),
  };
}

async function mapNameConflict<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof BillingError && error.code === 'conflict')
      throw invalid('Name: must be unique - that value has been taken.', 'name');
    throw error;
  }
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const METAFIELD_METHODS = [
  'createFields',
  'updateField',
  'updateFields',
  'deleteField',
  'listFields',
  'setMetadata',
  'updateMetadata',
  'listMetadata',
  'deleteMetadata',
] as const;
