import { sqliteHarness } from '../support/sqlite.js';
import { migrationScenarios } from './migration.suite.js';

migrationScenarios(sqliteHarness);
