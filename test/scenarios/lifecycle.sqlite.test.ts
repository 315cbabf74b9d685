import { sqliteHarness } from '../support/sqlite.js';
import { lifecycleScenarios } from './lifecycle.suite.js';

lifecycleScenarios(sqliteHarness);
