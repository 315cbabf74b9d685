import { memoryHarness } from '../support/storages.js';
import { lifecycleScenarios } from './lifecycle.suite.js';

lifecycleScenarios(memoryHarness);
