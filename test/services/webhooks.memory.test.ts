import { memoryHarness } from '../support/storages.js';
import { webhooksSuite } from './webhooks.suite.js';

webhooksSuite(memoryHarness);
