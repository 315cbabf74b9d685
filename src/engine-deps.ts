import type { BillingEvent, EventKey } from './events.js';

/** The part of the event emitter the services use: emit after commit. */
export interface EventEmitterLike {
  emit(key: EventKey, event: BillingEvent): void;
}
