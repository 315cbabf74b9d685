/**
 * `billing-engine/testing`: what adapter authors and engine users need to test against the engine:
 * the storage conformance suite and the manual clock.
 */
export { ManualClock } from 'billing-engine';
export {
  type ConformanceTestApi,
  runStorageConformance,
  type StorageHarness,
  type TestFunction,
} from './conformance/index.js';
