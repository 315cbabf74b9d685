import { memoryHarness } from '../support/storages.js';
import { subscriptionLeftoversSuite } from './subscription-leftovers.suite.js';

subscriptionLeftoversSuite(memoryHarness);
