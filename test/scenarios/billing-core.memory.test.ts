import { memoryHarness } from '../support/storages.js';
import { billingCoreScenarios } from './billing-core.suite.js';

billingCoreScenarios(memoryHarness);
