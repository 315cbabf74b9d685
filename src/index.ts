/**
 * billing-engine: an embeddable subscription billing engine. This is the package's only root
 * surface: the engine factory, the storage/clock/gateway ports, records, errors and helpers.
 */
export * from './errors.js';
export type { Clock } from './ports/clock.js';
export { ManualClock, systemClock } from './clock.js';
export type * from './ports/storage.js';
