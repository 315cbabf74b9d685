import { memoryHarness } from '../support/storages.js';
import { remittanceSuite } from './remittance.suite.js';

remittanceSuite(memoryHarness);
