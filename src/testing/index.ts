/**
 * `billing-engine/testing`: what adapter authors and engine users need to test against the engine:
 * the storage conformance suite, the payment gateway contract and the manual clock.
 */
export { ManualClock } from 'billing-engine';
export {
  type ConformanceTestApi,
  runStorageConformance,
  type StorageHarness,
  type TestFunction,
} from './conformance/index.js';
export {
  type ContractCard,
  type ContractFault,
  type GatewayContractApi,
  type GatewayContractHarness,
  type GatewayUnderTest,
  runGatewayContract,
} from './gateway-contract.js';
