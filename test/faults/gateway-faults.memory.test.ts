import { memoryHarness } from '../support/storages.js';
import { gatewayFaultsSuite } from './gateway-faults.suite.js';

gatewayFaultsSuite(memoryHarness);
