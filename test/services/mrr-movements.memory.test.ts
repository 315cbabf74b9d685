import { memoryHarness } from '../support/storages.js';
import { mrrMovementsSuite } from './mrr-movements.suite.js';

mrrMovementsSuite(memoryHarness);
