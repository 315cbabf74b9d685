import { sqliteHarness } from '../support/sqlite.js';
import { previewScenarios } from './preview.suite.js';

previewScenarios(sqliteHarness);
