import { memoryHarness } from '../support/storages.js';
import { sitesSuite } from './sites.suite.js';

sitesSuite(memoryHarness);
