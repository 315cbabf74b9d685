import {
  type ComponentPricingInput,
  componentPrice,
  type PriceBracketInput,
  parseComponentPricing,
  samePricing,
} from '../domain/catalog/component-pricing.js';
import { HANDLE_PATTERN } from '../domain/catalog/handle.js';
import { BillingError, invalid, notFound, ValidationCollector } from '../errors.js';
import type {
  ComponentKind,
  ComponentPricing,
  ComponentRecord,
  ComponentVersionRecord,
  PricingScheme,
  StorageTransaction,
} from '../ports/storage.js';
import { loadFamily } from './catalog-service.js';
import { type CommandDeps, runCommand } from './command-runner.js';
import { runRead } from './read-runner.js';
import { loadSite } from './site-lookup.js';

/** A component kind as callers may spell it: the service's `*_component` names or the short ones. */
export type ComponentKindInput = ComponentKind | 'quantity_based' | 'on_off' | 'metered';

/**
 * Input of a component. Pricing is either `pricingScheme` with `prices` (brackets), or the
 * shortcut `unitPrice`, which means per_unit with one open-ended bracket from 1. Unit prices are
 * decimal strings in major units with up to four places (`"0.0125"`).
 */
export interface ComponentInput {
  readonly name?: string;
  readonly kind?: ComponentKindInput;
  /** Unique per site when given; components have no handle by default. */
  readonly handle?: string | null;
  /** Required for quantity-based and metered components ("seat", "GB"). */
  readonly unitName?: string;
  readonly description?: string | null;
  readonly taxable?: boolean;
  readonly pricingScheme?: PricingScheme;
  readonly prices?: readonly PriceBracketInput[];
  readonly unitPrice?: string | number;
}

/** Input of a component update: the kind cannot change; pricing changes make a new version. */
export type ComponentUpdateInput = Omit<ComponentInput, 'kind'>;

/** A component with one version of its pricing (the current one, for reads). */
export interface ComponentView {
  readonly component: ComponentRecord;
  readonly version: ComponentVersionRecord;
}

/** A price preview: what `quantity` units of a component version cost. */
export interface ComponentPriceQuote {
  readonly componentId: number;
  readonly version: number;
  readonly quantity: number;
  readonly currency: string;
  readonly priceInCents: number;
}

/** Options of {@link ComponentService.list}. */
export interface ListComponentsOptions {
  /** Only this family's components (id or handle). */
  readonly familyId?: number | string;
  /** Include archived components; false by default. */
  readonly includeArchived?: boolean;
}

const KINDS: Readonly<Record<ComponentKindInput, ComponentKind>> = {
  quantity_based_component: 'quantity_based_component',
  on_off_component: 'on_off_component',
  metered_component: 'metered_component',
  quantity_based: 'quantity_based_component',
  on_off: 'on_off_component',
  metered: 'metered_component',
};

/**
 * Components of a site's product families: quantity-based, on/off and metered,
 * priced by per_unit, volume, tiered or stairstep brackets. A pricing change adds an immutable
 * version; name, unit, handle and archive changes do not.
 */
export class ComponentService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /** Creates a component in a family (by id or handle), with version 1 of its pricing. */
  async create(subdomain: string, familyId: number | string, input: ComponentInput): Promise<ComponentView> {
    const errors = new ValidationCollector();
    const kind = Object.hasOwn(KINDS, String(input.kind)) ? KINDS[input.kind as ComponentKindInput] : undefined;
    if (kind === undefined) {
      errors.add(
        input.kind === undefined ? 'Kind: cannot be blank.' : `Kind: '${String(input.kind)}' is not a component kind.`,
        'kind',
      );
    }
    const fields = componentFields(input, undefined, kind, errors);
    const pricing = resolvePricing(input, undefined, kind, errors);
    errors.throwIfAny();
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const family = await loadFamily(tx, site.id, familyId);
      return mapHandleConflict(
        tx.components.insert(
          {
            siteId: site.id,
            familyId: family.id,
            kind: kind as ComponentKind,
            name: fields.name as string,
            handle: fields.handle ?? null,
            unitName: fields.unitName as string,
            description: fields.description ?? null,
            taxable: fields.taxable ?? false,
            archivedAt: null,
            createdAt: now,
            updatedAt: now,
          },
          pricing as ComponentPricing,
        ),
      );
    });
  }

  /**
   * Changes a component. New pricing (scheme, brackets or unit price) that differs from the
   * current one adds a version and makes it current; allocations already billed keep theirs.
   * Name, unit name, description, taxability and handle change in place.
   */
  async update(subdomain: string, idOrHandle: number | string, input: ComponentUpdateInput): Promise<ComponentView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const current = await loadComponent(tx, site.id, idOrHandle);
      const errors = new ValidationCollector();
      if ('kind' in input && (input as ComponentInput).kind !== undefined) {
        const kind = KINDS[(input as ComponentInput).kind as ComponentKindInput];
        if (kind !== current.component.kind) errors.add('Kind: cannot be changed once the component exists.', 'kind');
      }
      const fields = componentFields(input, current.component, current.component.kind, errors);
      const pricing = resolvePricing(input, current.version.pricing, current.component.kind, errors);
      errors.throwIfAny();
      let component = current.component;
      let version = current.version;
      // componentFields sets only the fields the input sends, so an empty object means no change.
      if (Object.keys(fields).length > 0) {
        const updated = await mapHandleConflict(
          tx.components.update(site.id, component.id, { ...fields, updatedAt: now }),
        );
        if (!updated) throw notFound('Component', component.id);
        component = updated;
      }
      if (pricing && !samePricing(pricing, current.version.pricing)) {
        const next = await tx.components.addVersion(site.id, component.id, component.currentVersion, pricing, now);
        if (!next) throw new BillingError('conflict', 'The component was changed by another request; try again.');
        component = next.component;
        version = next.version;
      }
      return { component, version };
    });
  }

  /** Archives a component: it can no longer be added; existing allocations keep billing. */
  async archive(subdomain: string, idOrHandle: number | string): Promise<ComponentView> {
    return this.#setArchived(subdomain, idOrHandle, true);
  }

  /** Makes an archived component available again. */
  async unarchive(subdomain: string, idOrHandle: number | string): Promise<ComponentView> {
    return this.#setArchived(subdomain, idOrHandle, false);
  }

  /** A component with its current pricing, by id or handle; `not_found` when missing. */
  async get(subdomain: string, idOrHandle: number | string): Promise<ComponentView> {
    return runRead(this.#deps, subdomain, ({ tx, site }) => loadComponent(tx, site.id, idOrHandle));
  }

  /** The site's components with their current pricing, by id; archived ones only when asked for. */
  async list(subdomain: string, options: ListComponentsOptions = {}): Promise<ComponentView[]> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const familyId =
        options.familyId === undefined ? undefined : (await loadFamily(tx, site.id, options.familyId)).id;
      const views: ComponentView[] = [];
      for (const component of await tx.components.list(site.id, familyId)) {
        if (component.archivedAt !== null && options.includeArchived !== true) continue;
        views.push(await loadComponentVersion(tx, site.id, component.id, component.currentVersion));
      }
      return views;
    });
  }

  /**
   * What `quantity` units cost at the component's current pricing (or at `version`), in the site's
   * currency: a preview that changes nothing.
   */
  async price(
    subdomain: string,
    idOrHandle: number | string,
    quantity: number,
    options: { version?: number } = {},
  ): Promise<ComponentPriceQuote> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const current = await loadComponent(tx, site.id, idOrHandle);
      const view =
        options.version === undefined
          ? current
          : await loadComponentVersion(tx, site.id, current.component.id, options.version);
      return {
        componentId: view.component.id,
        version: view.version.version,
        quantity,
        currency: site.currency,
        priceInCents: componentPrice(view.version.pricing, quantity, site.currency),
      };
    });
  }

  #setArchived(subdomain: string, idOrHandle: number | string, archived: boolean): Promise<ComponentView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const current = await loadComponent(tx, site.id, idOrHandle);
      if ((current.component.archivedAt !== null) === archived) return current;
      const component = await tx.components.update(site.id, current.component.id, {
        archivedAt: archived ? now : null,
        updatedAt: now,
      });
      if (!component) throw notFound('Component', current.component.id);
      return { component, version: current.version };
    });
  }
}

/** A component (by id or handle) with its current version; `not_found` when missing. */
export async function loadComponent(
  tx: StorageTransaction,
  siteId: number,
  idOrHandle: number | string,
): Promise<ComponentView> {
  const component =
    typeof idOrHandle === 'number'
      ? await tx.components.findById(siteId, idOrHandle)
      : await tx.components.findByHandle(siteId, idOrHandle);
  if (!component) throw notFound('Component', idOrHandle);
  const version = await tx.components.findVersion(siteId, component.id, component.currentVersion);
  if (!version)
    throw new BillingError('storage', `Component ${component.id} has no version ${component.currentVersion}.`);
  return { component, version };
}

/**
 * A component with one particular pricing version, current or old: what billing uses to price an
 * allocation made at that version. `not_found` when the component or the version is missing.
 */
export async function loadComponentVersion(
  tx: StorageTransaction,
  siteId: number,
  componentId: number,
  version: number,
): Promise<ComponentView> {
  const component = await tx.components.findById(siteId, componentId);
  if (!component) throw notFound('Component', componentId);
  const found = await tx.components.findVersion(siteId, componentId, version);
  if (!found) {
    throw new BillingError('not_found', `Component ${componentId} has no version ${version}.`, {
      data: { what: 'component_version', id: componentId, version },
    });
  }
  return { component, version: found };
}

interface ComponentFields {
  name?: string;
  handle?: string | null;
  unitName?: string;
  description?: string | null;
  taxable?: boolean;
}

/** The non-pricing fields of an input, checked; on update (`current` given) only the fields sent. */
function componentFields(
  input: ComponentInput,
  current: ComponentRecord | undefined,
  kind: ComponentKind | undefined,
  errors: ValidationCollector,
): ComponentFields {
  const fields: ComponentFields = {};
  if (input.name !== undefined || !current) {
    if (typeof input.name !== 'string' || input.name.trim() === '') errors.add('Name: cannot be blank.', 'name');
    else fields.name = input.name.trim();
  }
  if (input.handle !== undefined) {
    if (input.handle !== null && (typeof input.handle !== 'string' || !HANDLE_PATTERN.test(input.handle))) {
      errors.add(
        'API Handle: must start with a letter or number and may only contain lowercase letters, numbers, underscores and dashes.',
        'handle',
      );
    } else fields.handle = input.handle;
  }
  if (input.unitName !== undefined || !current) {
    const unitName = typeof input.unitName === 'string' ? input.unitName.trim() : '';
    // An on/off component is either on or off; the service does not ask for a unit name.
    if (unitName === '' && kind === 'on_off_component' && !current) fields.unitName = 'on/off';
    else if (unitName === '') errors.add('Unit name: cannot be blank.', 'unit_name');
    else fields.unitName = unitName;
  }
  if (input.description !== undefined) {
    if (input.description !== null && typeof input.description !== 'string')
      errors.add('Description: must be a string.', 'description');
    else fields.description = input.description;
  }
  if (input.taxable !== undefined) {
    if (typeof input.taxable !== 'boolean') errors.add('Taxable: must be true or false.', 'taxable');
    else fields.taxable = input.taxable;
  }
  return fields;
}

/** The pricing fields of a component or component price point input. */
export type ComponentPricingFields = Pick<ComponentInput, 'pricingScheme' | 'prices' | 'unitPrice'>;

/**
 * The pricing an input asks for, checked: undefined on an update that sends no pricing. An on/off
 * component has one price, so only per_unit with one bracket fits it. Component price points are
 * checked by the same rules (see `price-point-service.ts`).
 */
export function resolvePricing(
  input: ComponentPricingFields,
  current: ComponentPricing | undefined,
  kind: ComponentKind | undefined,
  errors: ValidationCollector,
): ComponentPricing | undefined {
  const sendsBrackets = input.prices !== undefined || input.pricingScheme !== undefined;
  if (input.unitPrice !== undefined && input.prices !== undefined) {
    errors.add('Unit price: cannot be given together with price brackets.', 'unit_price');
    return undefined;
  }
  let request: ComponentPricingInput | undefined;
  if (input.unitPrice !== undefined) {
    if (input.pricingScheme !== undefined && input.pricingScheme !== 'per_unit') {
      errors.add(
        'Unit price: only a per_unit component has a single unit price; send price brackets instead.',
        'unit_price',
      );
      return undefined;
    }
    request = {
      scheme: 'per_unit',
      brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice: input.unitPrice }],
    };
  } else if (sendsBrackets) {
    request = {
      scheme: input.pricingScheme ?? current?.scheme,
      brackets: input.prices ?? current?.brackets ?? [],
    };
  } else if (!current) {
    errors.add('Prices: at least one price bracket is required.', 'prices');
    return undefined;
  }
  if (request === undefined) return undefined;
  if (kind === 'on_off_component' && request.scheme !== 'per_unit') {
    errors.add('Pricing scheme: an on/off component is priced per unit.', 'pricing_scheme');
    return undefined;
  }
  return errors.capture(() => parseComponentPricing(request));
}

async function mapHandleConflict<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof BillingError && error.code === 'conflict')
      throw invalid('API Handle: must be unique - that value has been taken.', 'handle');
    throw error;
  }
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const COMPONENT_METHODS = ['create', 'update', 'archive', 'unarchive', 'get', 'list', 'price'] as const;
