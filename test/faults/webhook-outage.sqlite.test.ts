import { sqliteHarness } from '../support/sqlite.js';
import { webhookOutageSuite } from './webhook-outage.suite.js';

webhookOutageSuite(sqliteHarness);
