import { memoryHarness } from '../support/storages.js';
import { siteExtrasSuite } from './site-extras.suite.js';

siteExtrasSuite(memoryHarness);
