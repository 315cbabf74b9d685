import type { SubscriptionDeps } from './subscription-service.js';

/** Payment profiles: create, list, read, delete, and a subscription's default. */
export class PaymentProfileService {
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
export const PAYMENT_PROFILE_METHODS = [] as const;
