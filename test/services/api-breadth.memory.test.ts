import { memoryHarness } from '../support/storages.js';
import { apiBreadthSuite } from './api-breadth.suite.js';

apiBreadthSuite(memoryHarness);
