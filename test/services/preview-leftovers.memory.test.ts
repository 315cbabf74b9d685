import { memoryHarness } from '../support/storages.js';
import { previewLeftoversSuite } from './preview-leftovers.suite.js';

previewLeftoversSuite(memoryHarness);
