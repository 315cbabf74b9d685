import { memoryHarness } from '../support/storages.js';
import { billingScenarios } from './billing.suite.js';

billingScenarios(memoryHarness);
