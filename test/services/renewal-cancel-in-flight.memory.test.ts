import { memoryHarness } from '../support/storages.js';
import { renewalCancelInFlightSuite } from './renewal-cancel-in-flight.suite.js';

renewalCancelInFlightSuite(memoryHarness);
