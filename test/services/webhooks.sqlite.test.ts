import { sqliteHarness } from '../support/sqlite.js';
import { webhooksSuite } from './webhooks.suite.js';

webhooksSuite(sqliteHarness);
