import type { SubscriptionDeps } from './subscription-service.js';

/** Signup previews and purging a subscription. */
export class SubscriptionAdminService {
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
export const SUBSCRIPTION_ADMIN_METHODS = [] as const;
