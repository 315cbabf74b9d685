import { memoryHarness } from '../support/storages.js';
import { previewScenarios } from './preview.suite.js';

previewScenarios(memoryHarness);
