import { memoryHarness } from '../support/storages.js';
import { catalogSuite } from './catalog.suite.js';

catalogSuite(memoryHarness);
