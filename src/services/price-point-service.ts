import { samePricing } from '../domain/catalog/component-pricing.js';
import { firstFreeHandle, HANDLE_PATTERN, slugify } from '../domain/catalog/handle.js';
import {
  BillingError,
  type BillingErrorDetail,
  invalid,
  isBillingError,
  notFound,
  ValidationCollector,
  validationError,
} from '../errors.js';
import type {
  ComponentPricePointRecord,
  ComponentPricing,
  ComponentRecord,
  ComponentVersionRecord,
  PricePointType,
  ProductPricePointRecord,
  ProductRecord,
  ProductTerms,
  ProductVersionRecord,
  StorageTransaction,
  SubscriptionComponentRecord,
} from '../ports/storage.js';
import {
  type IntervalUnitInput,
  loadProduct,
  type ProductView,
  productIdOf,
  productTerms,
  sameTerms,
} from './catalog-service.js';
import type { CommandContext, CommandDeps } from './command-runner.js';
import { runCommand } from './command-runner.js';
import {
  type ComponentPricingFields,
  type ComponentView,
  loadComponent,
  loadComponentVersion,
  resolvePricing,
} from './component-service.js';
import {
  type ComponentCurrencyPriceInput,
  type CurrencyPriceUpdateInput,
  checkComponentCurrencyPrices,
  checkCurrencyPriceUpdates,
  checkProductCurrencyPrices,
  type ProductCurrencyPriceInput,
  refuseCurrencies,
  refuseCurrencyPriceUpdates,
} from './currency-prices.js';
import { runRead } from './read-runner.js';
import { loadSite, loadSubscription } from './site-lookup.js';

/**
 * Input of a product price point. On create `name`, `priceInCents`, `interval` and `intervalUnit`
 * are required; on an update every field is optional, an omitted one keeps its value and `null`
 * clears an optional term (a trial, an initial charge, an expiration). Amounts are minor units.
 */
export interface ProductPricePointInput {
  readonly name?: string;
  readonly handle?: string;
  readonly priceInCents?: number | string;
  readonly interval?: number | string;
  readonly intervalUnit?: IntervalUnitInput;
  readonly trialPriceInCents?: number | string | null;
  readonly trialInterval?: number | string | null;
  readonly trialIntervalUnit?: IntervalUnitInput | null;
  readonly initialChargeInCents?: number | string | null;
  readonly initialChargeAfterTrial?: boolean;
  readonly expirationInterval?: number | string | null;
  readonly expirationIntervalUnit?: IntervalUnitInput | null;
}

/** A price point with the terms of its current version. */
export interface ProductPricePointView {
  readonly pricePoint: ProductPricePointRecord;
  readonly terms: ProductTerms;
}

/** Options of {@link PricePointService.listProductPricePoints}. */
export interface ProductPricePointListInput {
  /** Archived price points too (the SDK's `archived=true`). */
  readonly includeArchived?: boolean;
  /** Only these types (`filter[type]`). */
  readonly types?: readonly PricePointType[];
}

/** Options of {@link PricePointService.listAllProductPricePoints} (`GET /products_price_points.json`). */
export interface AllProductPricePointsInput {
  readonly types?: readonly PricePointType[];
  readonly ids?: readonly number[];
  /** `filter[archived_at]=not_null` lists only archived ones, `null` only live ones (the default). */
  readonly archivedAt?: 'null' | 'not_null';
}

/** A price point named by id or by handle (the SDK's `handle:` prefix already removed). */
export type PricePointRef = number | string;

/** Which price point a signup or migration asks for. */
export interface PricePointChoice {
  readonly pricePointId?: number | null;
  readonly pricePointHandle?: string | null;
  /** The subscription migrating: the one subscription a custom price point of its own is open to. */
  readonly subscriptionId?: number | null;
}

/**
 * Input of a component price point: a name, an optional handle (made from the name when left out)
 * and pricing as components take it (`pricingScheme` with `prices`, or the per-unit shortcut
 * `unitPrice`). On create `name` and the pricing are required; on an update every field is
 * optional and `prices`, when given, replaces the brackets.
 */
export interface ComponentPricePointInput extends ComponentPricingFields {
  readonly name?: string;
  readonly handle?: string;
}

/** A component price point with the pricing of its current version. */
export interface ComponentPricePointView {
  readonly pricePoint: ComponentPricePointRecord;
  readonly version: ComponentVersionRecord;
}

/** Options of {@link PricePointService.listComponentPricePoints}. */
export type ComponentPricePointListInput = ProductPricePointListInput;

/** Options of {@link PricePointService.listAllComponentPricePoints} (`GET /components_price_points.json`). */
export type AllComponentPricePointsInput = AllProductPricePointsInput;

/** One entry of {@link PricePointService.setSubscriptionComponentPricePoints}: a component and its new price point (id or handle). */
export interface ComponentPricePointAssignment {
  readonly componentId: number;
  readonly pricePoint: PricePointRef;
}

/** What {@link PricePointService.setSubscriptionComponentPricePoints} did to one component. */
export interface ComponentPricePointAssigned {
  readonly componentId: number;
  readonly pricePoint: ComponentPricePointRecord;
  /** The component version the subscription's component is now billed at. */
  readonly componentVersion: number;
}

/** A subscription component with the price point of its pinned version (undefined when none is recorded). */
export interface SubscriptionComponentPricePoint {
  readonly subscriptionComponent: SubscriptionComponentRecord;
  readonly pricePoint: ComponentPricePointRecord | undefined;
}

const HANDLE_MESSAGE =
  'Handle: must start with a letter or number and may only contain lowercase letters, numbers, underscores and dashes.';

/**
 * Price points of products: alternative terms (price, interval, trial, initial charge, expiration)
 * a subscription can be signed up or migrated on. Each revision of a price point's terms is an
 * immutable product version marked with the price point, so a subscriber stays on the terms it was
 * sold exactly as it does with product versions, and billing reads versions alone. Every product
 * has one `default` price point, whose current version is the product's current version.
 */
export class PricePointService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /** The storage, clock and gateway the commands run on. */
  protected get deps(): CommandDeps {
    return this.#deps;
  }

  /** Creates a `catalog` price point on a product (by id or handle). */
  async createProductPricePoint(
    subdomain: string,
    productRef: number | string,
    input: ProductPricePointInput,
  ): Promise<ProductPricePointView> {
    return (await this.bulkCreateProductPricePoints(subdomain, productRef, [input]))[0]!;
  }

  /** Creates several price points on one product, all or none: any invalid one refuses the whole batch. */
  async bulkCreateProductPricePoints(
    subdomain: string,
    productRef: number | string,
    inputs: readonly ProductPricePointInput[],
  ): Promise<ProductPricePointView[]> {
    if (inputs.length === 0) throw mapped(invalid('Price points: cannot be empty.', 'price_points'));
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const product = await loadProduct(tx, site.id, await productIdOf(tx, site.id, productRef));
      const base = withoutOptionalTerms(product.version.terms);
      const handles = new Set<string>();
      const checked = inputs.map((input) => {
        const errors = new ValidationCollector();
        const name = requiredName(input.name, errors);
        if (input.priceInCents === undefined) errors.add('Price in cents: cannot be blank.', 'price_in_cents');
        if (input.interval === undefined) errors.add('Interval: cannot be blank.', 'interval');
        if (input.intervalUnit === undefined) errors.add('Interval unit: cannot be blank.', 'interval_unit');
        if (input.handle !== undefined) {
          checkHandle(input.handle, errors);
          if (handles.has(input.handle)) errors.add('Handle: must be unique - that value has been taken.', 'handle');
          handles.add(input.handle);
        }
        const terms = errors.capture(() => productTerms(base, termsInput(input)));
        if (!errors.ok) throw mapped(validationError(collected(errors)));
        return { name, handle: input.handle, terms: terms! };
      });
      const taken = async (h: string) =>
        (await tx.pricePoints.findProductPricePointByHandle(site.id, product.product.id, h)) !== undefined;
      const views: ProductPricePointView[] = [];
      for (const { name, handle: given, terms } of checked) {
        // Without a handle one is made from the name, as products get theirs.
        const handle =
          given ??
          (await firstFreeHandle(slugify(name) || 'price-point', async (h) => handles.has(h) || (await taken(h))));
        handles.add(handle);
        if (given !== undefined && (await taken(given))) throw handleTakenError();
        const { pricePoint, version } = await mapHandleConflict(
          tx.pricePoints.insertProductPricePoint(
            {
              siteId: site.id,
              productId: product.product.id,
              name,
              handle,
              archivedAt: null,
              createdAt: now,
              updatedAt: now,
            },
            terms,
          ),
        );
        views.push({ pricePoint, terms: version.terms });
      }
      return views;
    });
  }

  /** A product's price points by id; archived ones only when asked for. */
  async listProductPricePoints(
    subdomain: string,
    productRef: number | string,
    options: ProductPricePointListInput = {},
  ): Promise<ProductPricePointView[]> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const productId = await productIdOf(tx, site.id, productRef);
      const records = await tx.pricePoints.listProductPricePoints(site.id, {
        productId,
        includeArchived: options.includeArchived === true,
      });
      return viewsOf(tx, filterTypes(records, options.types));
    });
  }

  /** Every product's price points (`GET /products_price_points.json`), by id. */
  async listAllProductPricePoints(
    subdomain: string,
    options: AllProductPricePointsInput = {},
  ): Promise<ProductPricePointView[]> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const records = await tx.pricePoints.listProductPricePoints(site.id, {
        onlyArchived: options.archivedAt === 'not_null',
      });
      return viewsOf(tx, filterTypes(withIds(records, options.ids), options.types));
    });
  }

  /** One price point of a product, by id or handle; `not_found` when it is not that product's. */
  async getProductPricePoint(
    subdomain: string,
    productRef: number | string,
    pricePointRef: PricePointRef,
  ): Promise<ProductPricePointView> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const productId = await productIdOf(tx, site.id, productRef);
      const pricePoint = await loadPricePoint(tx, site.id, productId, pricePointRef);
      return (await viewsOf(tx, [pricePoint]))[0]!;
    });
  }

  /**
   * Changes a price point. New terms are a new product version the price point (and, for the
   * default, the product) points at; subscribers on the old terms keep them. A name or handle
   * change alone adds no version.
   */
  async updateProductPricePoint(
    subdomain: string,
    productRef: number | string,
    pricePointRef: PricePointRef,
    input: ProductPricePointInput,
  ): Promise<ProductPricePointView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const productId = await productIdOf(tx, site.id, productRef);
      const current = await loadPricePoint(tx, site.id, productId, pricePointRef);
      const version = await versionOf(tx, current);
      const errors = new ValidationCollector();
      const name = input.name === undefined ? undefined : requiredName(input.name, errors);
      if (input.handle !== undefined) checkHandle(input.handle, errors);
      if (current.type === 'custom') errors.add('Price point: custom price points cannot be updated.', 'price_point');
      const terms = errors.capture(() => productTerms(version.terms, termsInput(input)));
      if (!errors.ok) throw mapped(validationError(collected(errors)));
      const changed = !sameTerms(terms!, version.terms);
      const patch = {
        ...(name === undefined || name === current.name ? {} : { name }),
        ...(input.handle === undefined || input.handle === current.handle ? {} : { handle: input.handle }),
      };
      if (!changed && Object.keys(patch).length === 0) return { pricePoint: current, terms: version.terms };
      const revised = await mapHandleConflict(
        tx.pricePoints.reviseProductPricePoint(site.id, current.id, patch, changed ? terms : undefined, now),
      );
      if (!revised) throw notFound('Price point', current.id);
      return { pricePoint: revised.pricePoint, terms: revised.version.terms };
    });
  }

  /**
   * Archives a price point: it can no longer be signed up or migrated on, while its subscribers
   * keep billing as before. The default price point cannot be archived.
   */
  async archiveProductPricePoint(
    subdomain: string,
    productRef: number | string,
    pricePointRef: PricePointRef,
  ): Promise<ProductPricePointView> {
    return this.#setArchived(subdomain, productRef, pricePointRef, true);
  }

  /** Makes an archived price point available again. */
  async unarchiveProductPricePoint(
    subdomain: string,
    productRef: number | string,
    pricePointRef: PricePointRef,
  ): Promise<ProductPricePointView> {
    return this.#setArchived(subdomain, productRef, pricePointRef, false);
  }

  /**
   * Makes a price point its product's default: new signups without a price point get its terms,
   * the old default becomes a `catalog` price point, and subscribers keep what they have. Answers
   * the product at its new current version.
   */
  async promoteProductPricePointToDefault(
    subdomain: string,
    productRef: number | string,
    pricePointRef: PricePointRef,
  ): Promise<ProductView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const productId = await productIdOf(tx, site.id, productRef);
      const current = await loadPricePoint(tx, site.id, productId, pricePointRef);
      if (current.archivedAt !== null)
        throw mapped(invalid('Price point: an archived price point cannot be the default.', 'price_point'));
      if (current.type === 'custom')
        throw mapped(invalid('Price point: a custom price point cannot be the default.', 'price_point'));
      if (current.type !== 'default') {
        const promoted = await tx.pricePoints.makeDefaultProductPricePoint(site.id, current.id, now);
        if (!promoted) throw notFound('Price point', current.id);
      }
      return loadProduct(tx, site.id, productId);
    });
  }

  /**
   * Prices of a product price point in other currencies (`POST
   * /product_price_points/{id}/currency_prices.json`), under the spec's one-currency rule (see
   * currency-prices.ts). In order: the entries are checked (currency, price in its major units,
   * role; at most `MAX_CURRENCY_PRICES`); the price point is looked up by id (`not_found`);
   * a custom one is refused; then each currency is refused by name, since a site defines no
   * currency besides its own, which is the price point's primary pricing. Never resolves: every
   * request ends in one of these refusals, read-only, so nothing is written.
   */
  async createProductCurrencyPrices(
    subdomain: string,
    pricePointId: number,
    prices: readonly ProductCurrencyPriceInput[],
  ): Promise<never> {
    const currencies = checkProductCurrencyPrices(prices);
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const pricePoint = await findProductPricePointById(tx, site.id, pricePointId);
      if (pricePoint.type === 'custom')
        throw currencyPriceRefusal('Currency Prices are not able to be created for custom product price points.');
      return refuseCurrencies(site, currencies, 'price point');
    });
  }

  /**
   * New prices for currency prices of a product price point, by their ids (`PUT
   * /product_price_points/{id}/currency_prices.json`). Checked in the order of
   * {@link createProductCurrencyPrices}; the ids are then refused, since a site with one currency
   * has no currency prices to update. Never resolves; nothing is written.
   */
  async updateProductCurrencyPrices(
    subdomain: string,
    pricePointId: number,
    prices: readonly CurrencyPriceUpdateInput[],
  ): Promise<never> {
    const ids = checkCurrencyPriceUpdates(prices);
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const pricePoint = await findProductPricePointById(tx, site.id, pricePointId);
      if (pricePoint.type === 'custom')
        throw currencyPriceRefusal('Currency Prices are not able to be updated for custom product price points.');
      return refuseCurrencyPriceUpdates(site, ids);
    });
  }

  /**
   * Prices of a component price point's brackets in other currencies (`POST
   * /price_points/{id}/currency_prices.json`), in the order of
   * {@link createProductCurrencyPrices}: entries (currency, unit price, bracket `priceId`), the
   * price point by id, a custom one refused, then each currency refused by name. Never resolves;
   * nothing is written.
   */
  async createComponentCurrencyPrices(
    subdomain: string,
    pricePointId: number,
    prices: readonly ComponentCurrencyPriceInput[],
  ): Promise<never> {
    const currencies = checkComponentCurrencyPrices(prices);
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const pricePoint = await findComponentPricePointById(tx, site.id, pricePointId);
      if (pricePoint.type === 'custom')
        throw currencyPriceRefusal('Currency Prices are not able to be created for custom price points.');
      return refuseCurrencies(site, currencies, 'price point');
    });
  }

  /**
   * New prices for currency prices of a component price point, by their ids (`PUT
   * /price_points/{id}/currency_prices.json`), as {@link updateProductCurrencyPrices} does for
   * products. Never resolves; nothing is written.
   */
  async updateComponentCurrencyPrices(
    subdomain: string,
    pricePointId: number,
    prices: readonly CurrencyPriceUpdateInput[],
  ): Promise<never> {
    const ids = checkCurrencyPriceUpdates(prices);
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const pricePoint = await findComponentPricePointById(tx, site.id, pricePointId);
      if (pricePoint.type === 'custom')
        throw currencyPriceRefusal('Currency Prices are not able to be updated for custom price points.');
      return refuseCurrencyPriceUpdates(site, ids);
    });
  }

  /** Creates a `catalog` price point on a component (by id or handle). */
  async createComponentPricePoint(
    subdomain: string,
    componentRef: number | string,
    input: ComponentPricePointInput,
  ): Promise<ComponentPricePointView> {
    try {
      return (await this.#createComponentPricePoints(subdomain, componentRef, [input]))[0]!;
    } catch (error) {
      // The single create answers its refusals as a map of field to messages, as the service does.
      if (isBillingError(error, 'validation')) throw mapped(error);
      throw error;
    }
  }

  /** Creates several price points on one component, all or none: any invalid one refuses the whole batch. */
  async bulkCreateComponentPricePoints(
    subdomain: string,
    componentRef: number | string,
    inputs: readonly ComponentPricePointInput[],
  ): Promise<ComponentPricePointView[]> {
    return this.#createComponentPricePoints(subdomain, componentRef, inputs);
  }

  /** A component's price points by id; archived ones only when asked for. */
  async listComponentPricePoints(
    subdomain: string,
    componentRef: number | string,
    options: ComponentPricePointListInput = {},
  ): Promise<ComponentPricePointView[]> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const { component } = await loadComponent(tx, site.id, componentRef);
      const records = await tx.pricePoints.listComponentPricePoints(site.id, {
        componentId: component.id,
        includeArchived: options.includeArchived === true,
      });
      return componentViewsOf(tx, filterTypes(records, options.types));
    });
  }

  /** Every component's price points (`GET /components_price_points.json`), by id. */
  async listAllComponentPricePoints(
    subdomain: string,
    options: AllComponentPricePointsInput = {},
  ): Promise<ComponentPricePointView[]> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const records = await tx.pricePoints.listComponentPricePoints(site.id, {
        onlyArchived: options.archivedAt === 'not_null',
      });
      return componentViewsOf(tx, filterTypes(withIds(records, options.ids), options.types));
    });
  }

  /** One price point of a component, by id or handle; `not_found` when it is not that component's. */
  async getComponentPricePoint(
    subdomain: string,
    componentRef: number | string,
    pricePointRef: PricePointRef,
  ): Promise<ComponentPricePointView> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const { component } = await loadComponent(tx, site.id, componentRef);
      const pricePoint = await loadComponentPricePoint(tx, site.id, component.id, pricePointRef);
      return (await componentViewsOf(tx, [pricePoint]))[0]!;
    });
  }

  /**
   * Changes a component price point. New pricing is a new component version the price point (and,
   * for the default, the component) points at; subscribers on the old pricing keep it until they
   * are moved. A name or handle change alone adds no version. Refusals are a map of field to messages.
   */
  async updateComponentPricePoint(
    subdomain: string,
    componentRef: number | string,
    pricePointRef: PricePointRef,
    input: ComponentPricePointInput,
  ): Promise<ComponentPricePointView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const { component } = await loadComponent(tx, site.id, componentRef);
      const current = await loadComponentPricePoint(tx, site.id, component.id, pricePointRef);
      const { version } = await loadComponentVersion(tx, site.id, component.id, current.version);
      const errors = new ValidationCollector();
      const name = input.name === undefined ? undefined : requiredName(input.name, errors);
      if (input.handle !== undefined) checkHandle(input.handle, errors);
      if (current.type === 'custom') errors.add('Price point: custom price points cannot be updated.', 'price_point');
      const pricing = resolvePricing(input, version.pricing, component.kind, errors);
      if (!errors.ok) throw mapped(validationError(collected(errors)));
      const changed = pricing !== undefined && !samePricing(pricing, version.pricing);
      const patch = {
        ...(name === undefined || name === current.name ? {} : { name }),
        ...(input.handle === undefined || input.handle === current.handle ? {} : { handle: input.handle }),
      };
      if (!changed && Object.keys(patch).length === 0) return { pricePoint: current, version };
      const revised = await mapHandleConflict(
        tx.pricePoints.reviseComponentPricePoint(site.id, current.id, patch, changed ? pricing : undefined, now),
      );
      if (!revised) throw notFound('Price point', current.id);
      return revised;
    });
  }

  /**
   * Archives a component price point: allocations can no longer move to it, while subscriptions
   * already on it keep billing as before. The default price point cannot be archived.
   */
  async archiveComponentPricePoint(
    subdomain: string,
    componentRef: number | string,
    pricePointRef: PricePointRef,
  ): Promise<ComponentPricePointView> {
    return this.#setComponentArchived(subdomain, componentRef, pricePointRef, true);
  }

  /** Makes an archived component price point available again. */
  async unarchiveComponentPricePoint(
    subdomain: string,
    componentRef: number | string,
    pricePointRef: PricePointRef,
  ): Promise<ComponentPricePointView> {
    return this.#setComponentArchived(subdomain, componentRef, pricePointRef, false);
  }

  /**
   * Makes a price point its component's default: subscriptions that get the component from now on
   * without naming a price point are billed at its pricing, the old default becomes `catalog`, and
   * subscribers keep what they have. Answers the component at its new current version.
   */
  async promoteComponentPricePointToDefault(
    subdomain: string,
    componentRef: number | string,
    pricePointRef: PricePointRef,
  ): Promise<ComponentView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const { component } = await loadComponent(tx, site.id, componentRef);
      const current = await loadComponentPricePoint(tx, site.id, component.id, pricePointRef);
      if (current.archivedAt !== null)
        throw invalid('Price point: an archived price point cannot be the default.', 'price_point');
      if (current.type !== 'default') {
        const promoted = await tx.pricePoints.makeDefaultComponentPricePoint(site.id, current.id, now);
        if (!promoted) throw notFound('Price point', current.id);
      }
      return loadComponent(tx, site.id, component.id);
    });
  }

  /**
   * Moves components of a subscription to other price points (`POST
   * /subscriptions/{id}/price_points.json`), all or none. The subscription's component is pinned to
   * the price point's current version from now on: its next charge (an allocation change, the
   * renewal) is priced there; what was already charged for the current period stays as it was, so
   * nothing is prorated. A component the subscription has not used yet gets a row with nothing
   * allocated, so its first allocation is priced at the chosen price point. Refusals name the component and the price point
   * (`{"component_id":N,"price_point":X,"message":"..."}`): a component outside the subscription's
   * product family, an unknown or archived price point.
   */
  async setSubscriptionComponentPricePoints(
    subdomain: string,
    subscriptionId: number,
    assignments: readonly ComponentPricePointAssignment[],
  ): Promise<ComponentPricePointAssigned[]> {
    if (!Array.isArray(assignments) || assignments.length === 0)
      throw invalid('Components: at least one component and price point is required.', 'components');
    return runCommand(this.#deps, async (ctx) => {
      const { tx } = ctx;
      const site = await loadSite(tx, subdomain);
      const subscription = await loadSubscription(tx, site.id, subscriptionId);
      const product = await tx.catalog.findProduct(site.id, subscription.productId);
      const problems: BillingErrorDetail[] = [];
      const planned: { component: ComponentRecord; pricePoint: ComponentPricePointRecord }[] = [];
      for (const { componentId, pricePoint: ref } of assignments) {
        const problem = (message: string) =>
          problems.push({ message, attribute: 'price_point', extra: { component_id: componentId, price_point: ref } });
        const component = await tx.components.findById(site.id, componentId);
        if (!component || component.familyId !== product?.familyId) {
          problem(`Component: ${componentId} is not a component of this subscription's product family.`);
          continue;
        }
        const pricePoint = await findComponentPricePointRef(tx, site.id, component.id, ref);
        if (pricePoint === undefined) problem(`Price point: ${String(ref)} is not a price point of this component.`);
        else if (pricePoint.archivedAt !== null) problem(`Price point: ${pricePoint.handle} has been archived.`);
        else planned.push({ component, pricePoint });
      }
      if (problems.length > 0) throw validationError(problems, 'objects');
      const assigned: ComponentPricePointAssigned[] = [];
      for (const { component, pricePoint } of planned) {
        await moveComponent(ctx, subscription, component, pricePoint);
        assigned.push({ componentId: component.id, pricePoint, componentVersion: pricePoint.version });
      }
      return assigned;
    });
  }

  /**
   * Moves every component of a subscription back to its component's default price point
   * (`POST /subscriptions/{id}/price_points/reset.json`), from the next charge on as
   * {@link setSubscriptionComponentPricePoints} does. A component already at its default's
   * current version is left alone. Answers the components moved.
   */
  async resetSubscriptionComponentPricePoints(
    subdomain: string,
    subscriptionId: number,
  ): Promise<ComponentPricePointAssigned[]> {
    return runCommand(this.#deps, async (ctx) => {
      const { tx } = ctx;
      const site = await loadSite(tx, subdomain);
      const subscription = await loadSubscription(tx, site.id, subscriptionId);
      const assigned: ComponentPricePointAssigned[] = [];
      for (const row of await tx.subscriptionComponents.listForSubscription(site.id, subscription.id)) {
        const component = await tx.components.findById(site.id, row.componentId);
        const pricePoint = await tx.pricePoints.findDefaultComponentPricePoint(site.id, row.componentId);
        if (!component || !pricePoint || row.componentVersion === pricePoint.version) continue;
        await moveComponent(ctx, subscription, component, pricePoint);
        assigned.push({ componentId: component.id, pricePoint, componentVersion: pricePoint.version });
      }
      return assigned;
    });
  }

  /** The price point of each of a subscription's components (of its pinned version), by component id. */
  async listSubscriptionComponentPricePoints(
    subdomain: string,
    subscriptionId: number,
  ): Promise<SubscriptionComponentPricePoint[]> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      await loadSubscription(tx, site.id, subscriptionId);
      const rows = await tx.subscriptionComponents.listForSubscription(site.id, subscriptionId);
      const out: SubscriptionComponentPricePoint[] = [];
      for (const row of rows) {
        const pricePoint = await tx.pricePoints.findComponentVersionPricePoint(
          site.id,
          row.componentId,
          row.componentVersion,
        );
        out.push({ subscriptionComponent: row, pricePoint });
      }
      return out;
    });
  }

  /**
   * The live price points of the site's components (of one component when given), without their
   * pricing: what component reads need for their default price point and price point count.
   */
  async listComponentPricePointRecords(subdomain: string, componentId?: number): Promise<ComponentPricePointRecord[]> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      return tx.pricePoints.listComponentPricePoints(site.id, componentId === undefined ? {} : { componentId });
    });
  }

  async #createComponentPricePoints(
    subdomain: string,
    componentRef: number | string,
    inputs: readonly ComponentPricePointInput[],
  ): Promise<ComponentPricePointView[]> {
    if (!Array.isArray(inputs) || inputs.length === 0) throw invalid('Price points: cannot be empty.', 'price_points');
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const { component } = await loadComponent(tx, site.id, componentRef);
      const handles = new Set<string>();
      const errors = new ValidationCollector();
      const checked: { name: string; handle: string | undefined; pricing: ComponentPricing }[] = [];
      for (const input of inputs) {
        const before = errors.ok;
        const name = requiredName(input.name, errors);
        if (input.handle !== undefined) {
          checkHandle(input.handle, errors);
          if (handles.has(input.handle)) errors.add('Handle: must be unique - that value has been taken.', 'handle');
          handles.add(input.handle);
        }
        if (input.pricingScheme === undefined && input.unitPrice === undefined)
          errors.add('Pricing scheme: cannot be blank.', 'pricing_scheme');
        const pricing = resolvePricing(input, undefined, component.kind, errors);
        if (before && errors.ok && pricing !== undefined) checked.push({ name, handle: input.handle, pricing });
      }
      if (!errors.ok) throw validationError(collected(errors));
      const taken = async (h: string) =>
        (await tx.pricePoints.findComponentPricePointByHandle(site.id, component.id, h)) !== undefined;
      const views: ComponentPricePointView[] = [];
      for (const { name, handle: given, pricing } of checked) {
        // Without a handle one is made from the name, as product price points get theirs.
        const handle =
          given ??
          (await firstFreeHandle(slugify(name) || 'price-point', async (h) => handles.has(h) || (await taken(h))));
        handles.add(handle);
        if (given !== undefined && (await taken(given))) throw handleTakenError();
        views.push(
          await mapHandleConflict(
            tx.pricePoints.insertComponentPricePoint(
              {
                siteId: site.id,
                componentId: component.id,
                name,
                handle,
                archivedAt: null,
                createdAt: now,
                updatedAt: now,
              },
              pricing,
            ),
          ),
        );
      }
      return views;
    });
  }

  #setComponentArchived(
    subdomain: string,
    componentRef: number | string,
    pricePointRef: PricePointRef,
    archived: boolean,
  ): Promise<ComponentPricePointView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const { component } = await loadComponent(tx, site.id, componentRef);
      const current = await loadComponentPricePoint(tx, site.id, component.id, pricePointRef);
      if (archived && current.type === 'default')
        throw invalid('Price point: the default price point cannot be archived.', 'price_point');
      let pricePoint = current;
      if ((current.archivedAt !== null) !== archived) {
        const updated = await tx.pricePoints.setComponentPricePointArchived(
          site.id,
          current.id,
          archived ? now : null,
          now,
        );
        if (!updated) throw notFound('Price point', current.id);
        pricePoint = updated;
      }
      return (await componentViewsOf(tx, [pricePoint]))[0]!;
    });
  }

  #setArchived(
    subdomain: string,
    productRef: number | string,
    pricePointRef: PricePointRef,
    archived: boolean,
  ): Promise<ProductPricePointView> {
    return runCommand(this.#deps, async ({ tx, now }) => {
      const site = await loadSite(tx, subdomain);
      const productId = await productIdOf(tx, site.id, productRef);
      const current = await loadPricePoint(tx, site.id, productId, pricePointRef);
      if (archived && current.type === 'default')
        throw mapped(invalid('Price point: the default price point cannot be archived.', 'price_point'));
      // It belongs to its subscription, which bills on it whatever the catalog says.
      if (current.type === 'custom')
        throw mapped(
          invalid(
            `Price point: a custom price point cannot be ${archived ? 'archived' : 'unarchived'}.`,
            'price_point',
          ),
        );
      let pricePoint = current;
      if ((current.archivedAt !== null) !== archived) {
        const updated = await tx.pricePoints.setProductPricePointArchived(
          site.id,
          current.id,
          archived ? now : null,
          now,
        );
        if (!updated) throw notFound('Price point', current.id);
        pricePoint = updated;
      }
      return { pricePoint, terms: (await versionOf(tx, pricePoint)).terms };
    });
  }
}

/**
 * The product version a signup (or migration) on `product` gets: the named price point's current
 * version, or the product's current version when none is named. An unknown price point, one of
 * another product, or an archived one is a validation error (422), so nothing is written.
 */
export async function resolveSignupVersion(
  tx: StorageTransaction,
  siteId: number,
  product: ProductRecord,
  choice: PricePointChoice,
): Promise<ProductVersionRecord> {
  let pricePoint: ProductPricePointRecord | undefined;
  if (choice.pricePointId != null) {
    pricePoint = await tx.pricePoints.findProductPricePoint(siteId, choice.pricePointId);
    if (pricePoint === undefined || pricePoint.productId !== product.id)
      throw invalid(
        `Product price point: ${choice.pricePointId} is not a price point of product ${product.handle}.`,
        'product_price_point_id',
      );
  } else if (choice.pricePointHandle != null && choice.pricePointHandle !== '') {
    pricePoint = await tx.pricePoints.findProductPricePointByHandle(siteId, product.id, choice.pricePointHandle);
    if (pricePoint === undefined)
      throw invalid(
        `Product price point: ${choice.pricePointHandle} is not a price point of product ${product.handle}.`,
        'product_price_point_handle',
      );
  }
  if (
    pricePoint !== undefined &&
    pricePoint.type === 'custom' &&
    (choice.subscriptionId == null || pricePoint.subscriptionId !== choice.subscriptionId)
  ) {
    throw invalid(
      `Product price point: ${pricePoint.handle} is a custom price point of another subscription.`,
      choice.pricePointId != null ? 'product_price_point_id' : 'product_price_point_handle',
    );
  }
  const number = pricePoint?.version ?? product.currentVersion;
  if (pricePoint !== undefined && pricePoint.archivedAt !== null)
    throw invalid(`Product price point: ${pricePoint.handle} has been archived.`, 'product_price_point_id');
  const version = await tx.catalog.findProductVersion(siteId, product.id, number);
  if (!version) throw new BillingError('storage', `Product ${product.id} has no version ${number}.`);
  return version;
}

/** A product price point of the site by its id alone (the currency price paths name no product); `not_found` otherwise. */
async function findProductPricePointById(
  tx: StorageTransaction,
  siteId: number,
  id: number,
): Promise<ProductPricePointRecord> {
  const found = Number.isSafeInteger(id) && id > 0 ? await tx.pricePoints.findProductPricePoint(siteId, id) : undefined;
  if (!found) throw notFound('Price point', id);
  return found;
}

/** A component price point of the site by its id alone; `not_found` otherwise. */
async function findComponentPricePointById(
  tx: StorageTransaction,
  siteId: number,
  id: number,
): Promise<ComponentPricePointRecord> {
  const found =
    Number.isSafeInteger(id) && id > 0 ? await tx.pricePoints.findComponentPricePoint(siteId, id) : undefined;
  if (!found) throw notFound('Price point', id);
  return found;
}

/** A refusal of a currency-price request about the price point itself, as a map of field to messages. */
function currencyPriceRefusal(message: string): BillingError {
  return validationError([{ message, attribute: 'price_point' }], 'map');
}

/** A price point of the product by id or handle; `not_found` when missing or another product's. */
export async function loadPricePoint(
  tx: StorageTransaction,
  siteId: number,
  productId: number,
  ref: PricePointRef,
): Promise<ProductPricePointRecord> {
  const found =
    typeof ref === 'number'
      ? await tx.pricePoints.findProductPricePoint(siteId, ref)
      : await tx.pricePoints.findProductPricePointByHandle(siteId, productId, ref);
  if (!found || found.productId !== productId) throw notFound('Price point', ref);
  return found;
}

/**
 * A price point of the component by id or handle, or undefined. A string of digits is an id, as
 * the SDK's `price_point` may send one either way.
 */
export async function findComponentPricePointRef(
  tx: StorageTransaction,
  siteId: number,
  componentId: number,
  ref: PricePointRef,
): Promise<ComponentPricePointRecord | undefined> {
  const id = typeof ref === 'number' ? ref : /^\d+$/.test(ref) ? Number(ref) : undefined;
  const found =
    id !== undefined
      ? await tx.pricePoints.findComponentPricePoint(siteId, id)
      : await tx.pricePoints.findComponentPricePointByHandle(siteId, componentId, String(ref).replace(/^handle:/, ''));
  return found?.componentId === componentId ? found : undefined;
}

/** A price point of the component by id or handle; `not_found` when missing or another component's. */
export async function loadComponentPricePoint(
  tx: StorageTransaction,
  siteId: number,
  componentId: number,
  ref: PricePointRef,
): Promise<ComponentPricePointRecord> {
  const found = await findComponentPricePointRef(tx, siteId, componentId, ref);
  if (!found) throw notFound('Price point', ref);
  return found;
}

async function componentViewsOf(
  tx: StorageTransaction,
  records: readonly ComponentPricePointRecord[],
): Promise<ComponentPricePointView[]> {
  const views: ComponentPricePointView[] = [];
  for (const pricePoint of records) {
    const { version } = await loadComponentVersion(tx, pricePoint.siteId, pricePoint.componentId, pricePoint.version);
    views.push({ pricePoint, version });
  }
  return views;
}

/** The records whose id is among `ids`; all of them when no ids are given. */
function withIds<R extends { readonly id: number }>(records: readonly R[], ids: readonly number[] | undefined): R[] {
  if (ids === undefined) return [...records];
  const wanted = new Set(ids);
  return records.filter((r) => wanted.has(r.id));
}

/**
 * Pins a subscription's component to a price point's current version (a row with nothing
 * allocated when the subscription has not used the component yet). No event is recorded: the
 * service's `item_price_point_changed` is not among the events the engine can record yet.
 */
async function moveComponent(
  ctx: CommandContext,
  subscription: { readonly id: number; readonly siteId: number },
  component: ComponentRecord,
  pricePoint: ComponentPricePointRecord,
): Promise<void> {
  const { tx, now } = ctx;
  const existing = await tx.subscriptionComponents.find(subscription.siteId, subscription.id, component.id);
  if (existing?.componentVersion === pricePoint.version) return;
  await tx.subscriptionComponents.upsert({
    siteId: subscription.siteId,
    subscriptionId: subscription.id,
    componentId: component.id,
    componentVersion: pricePoint.version,
    allocatedQuantity: existing?.allocatedQuantity ?? 0,
    unitBalance: existing?.unitBalance ?? 0,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  });
}

async function versionOf(tx: StorageTransaction, pricePoint: ProductPricePointRecord): Promise<ProductVersionRecord> {
  const version = await tx.catalog.findProductVersion(pricePoint.siteId, pricePoint.productId, pricePoint.version);
  if (!version)
    throw new BillingError('storage', `Product ${pricePoint.productId} has no version ${pricePoint.version}.`);
  return version;
}

async function viewsOf(
  tx: StorageTransaction,
  records: readonly ProductPricePointRecord[],
): Promise<ProductPricePointView[]> {
  const views: ProductPricePointView[] = [];
  for (const pricePoint of records) views.push({ pricePoint, terms: (await versionOf(tx, pricePoint)).terms });
  return views;
}

/**
 * The records of the given types; without types, every one but the `custom` ones, which belong to
 * one subscription each and are listed only when asked for (`filter[type]=custom`).
 */
function filterTypes<T extends { readonly type: PricePointType }>(
  records: readonly T[],
  types: readonly PricePointType[] | undefined,
): T[] {
  return types === undefined || types.length === 0
    ? records.filter((r) => r.type !== 'custom')
    : records.filter((r) => types.includes(r.type));
}

/**
 * The product's terms without what a price point sets itself: a new price point (a custom one too)
 * starts with no trial, initial charge or expiration unless it names them. Product-wide terms
 * (name, accounting code, card and tax flags) are kept from the product's current version.
 */
export function withoutOptionalTerms(terms: ProductTerms): ProductTerms {
  return {
    ...terms,
    trialPriceInCents: null,
    trialInterval: null,
    trialIntervalUnit: null,
    initialChargeInCents: null,
    initialChargeAfterTrial: false,
    expirationInterval: null,
    expirationIntervalUnit: null,
  };
}

/** The price-related fields of the input, as the product terms validation reads them. */
function termsInput(input: ProductPricePointInput) {
  const { name: _name, handle: _handle, ...terms } = input;
  return terms;
}

function requiredName(value: unknown, errors: ValidationCollector): string {
  if (typeof value !== 'string' || value.trim() === '') {
    errors.add('Name: cannot be blank.', 'name');
    return '';
  }
  return value.trim();
}

function checkHandle(handle: unknown, errors: ValidationCollector): void {
  if (typeof handle !== 'string' || !HANDLE_PATTERN.test(handle)) errors.add(HANDLE_MESSAGE, 'handle');
}

function collected(errors: ValidationCollector) {
  try {
    errors.throwIfAny();
  } catch (error) {
    if (isBillingError(error)) return error.details;
    throw error;
  }
  return [];
}

/** The service answers price point validation errors as a map of field to messages. */
function mapped(error: BillingError): BillingError {
  return validationError(error.details, 'map');
}

function handleTakenError(): BillingError {
  return validationError(
    [{ message: 'Handle: must be unique - that value has been taken.', attribute: 'handle' }],
    'map',
  );
}

async function mapHandleConflict<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof BillingError && error.code === 'conflict') throw handleTakenError();
    throw error;
  }
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const PRICE_POINT_METHODS = [
  'createProductPricePoint',
  'bulkCreateProductPricePoints',
  'listProductPricePoints',
  'listAllProductPricePoints',
  'getProductPricePoint',
  'updateProductPricePoint',
  'archiveProductPricePoint',
  'unarchiveProductPricePoint',
  'promoteProductPricePointToDefault',
  'createComponentPricePoint',
  'bulkCreateComponentPricePoints',
  'listComponentPricePoints',
  'listAllComponentPricePoints',
  'getComponentPricePoint',
  'updateComponentPricePoint',
  'archiveComponentPricePoint',
  'unarchiveComponentPricePoint',
  'promoteComponentPricePointToDefault',
  'setSubscriptionComponentPricePoints',
  'resetSubscriptionComponentPricePoints',
  'listSubscriptionComponentPricePoints',
  'listComponentPricePointRecords',
  'createProductCurrencyPrices',
  'updateProductCurrencyPrices',
  'createComponentCurrencyPrices',
  'updateComponentCurrencyPrices',
] as const;
