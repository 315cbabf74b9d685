import type { SubscriptionDeps } from './subscription-service.js';

/** Site statistics, MRR and site-wide lists of subscription data. */
export class ReportService {
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
export const REPORT_METHODS = [] as const;
