import { memoryHarness } from '../support/storages.js';
import { migrationScenarios } from './migration.suite.js';

migrationScenarios(memoryHarness);
