import { memoryHarness } from '../support/storages.js';
import { componentScenarios } from './components.suite.js';

componentScenarios(memoryHarness);
