import type { SubscriptionDeps } from './subscription-service.js';

/** A subscription's account: prepayments, service credits and balances. */
export class AccountService {
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
export const ACCOUNT_METHODS = [] as const;
