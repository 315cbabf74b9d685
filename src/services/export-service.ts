import type { SubscriptionDeps } from './subscription-service.js';

/** Asynchronous CSV exports of subscriptions and invoices. */
export class ExportService {
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
export const EXPORT_METHODS = [] as const;
