import { memoryHarness } from '../support/storages.js';
import { allocationsSuite } from './allocations.suite.js';

allocationsSuite(memoryHarness);
