import { memoryHarness } from '../support/storages.js';
import { stripeEngineScenarios } from './stripe-engine.suite.js';

stripeEngineScenarios(memoryHarness);
