import { sqliteHarness } from '../support/sqlite.js';
import { componentScenarios } from './components.suite.js';

componentScenarios(sqliteHarness);
