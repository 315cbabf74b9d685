import { memoryHarness } from '../support/storages.js';
import { previewLeftoversStartDateSuite } from './preview-leftovers-start-date.suite.js';

previewLeftoversStartDateSuite(memoryHarness);
