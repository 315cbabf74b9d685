import { sqliteHarness } from '../support/sqlite.js';
import { billingScenarios } from './billing.suite.js';

billingScenarios(sqliteHarness);
