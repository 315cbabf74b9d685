import { memoryHarness } from '../support/storages.js';
import { awaitingSignupStartSuite } from './awaiting-signup-start.suite.js';

awaitingSignupStartSuite(memoryHarness);
