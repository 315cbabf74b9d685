import { sqliteHarness } from '../support/sqlite.js';
import { billingCoreScenarios } from './billing-core.suite.js';

billingCoreScenarios(sqliteHarness);
