import { memoryHarness } from '../support/storages.js';
import { mailSuite } from './mail.suite.js';

mailSuite(memoryHarness);
