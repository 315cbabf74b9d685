import { memoryHarness } from '../support/storages.js';
import { accountsSuite } from './accounts.suite.js';

accountsSuite(memoryHarness);
