import { memoryHarness } from '../support/storages.js';
import { signupTimingSuite } from './signup-timing.suite.js';

signupTimingSuite(memoryHarness);
