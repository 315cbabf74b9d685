import { memoryHarness } from '../support/storages.js';
import { reportsSuite } from './reports.suite.js';

reportsSuite(memoryHarness);
