import { memoryHarness } from '../support/storages.js';
import { offersSuite } from './offers.suite.js';

offersSuite(memoryHarness);
