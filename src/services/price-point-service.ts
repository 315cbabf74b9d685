import type { SubscriptionDeps } from './subscription-service.js';

/** Price points of products and components: alternative prices a subscription can be signed up on. */
export class PricePointService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /** The storage, clock and gateway the commands run on. */
  protected get deps(): SubscriptionDeps {
    return this.#deps;
  }
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const PRICE_POINT_METHODS = [] as const;
