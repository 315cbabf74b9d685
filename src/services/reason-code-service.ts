import type { SubscriptionDeps } from './subscription-service.js';

/** Churn reason codes of a site. */
export class ReasonCodeService {
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
export const REASON_CODE_METHODS = [] as const;
