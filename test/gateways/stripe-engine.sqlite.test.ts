import { sqliteHarness } from '../support/sqlite.js';
import { stripeEngineScenarios } from './stripe-engine.suite.js';

stripeEngineScenarios(sqliteHarness);
