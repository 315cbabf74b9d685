import { memoryHarness } from '../support/storages.js';
import { prepaidSuite } from './prepaid.suite.js';

prepaidSuite(memoryHarness);
