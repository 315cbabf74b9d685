import { memoryHarness } from '../support/storages.js';
import { webhookOutageSuite } from './webhook-outage.suite.js';

webhookOutageSuite(memoryHarness);
