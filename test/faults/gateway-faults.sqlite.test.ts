import { sqliteHarness } from '../support/sqlite.js';
import { gatewayFaultsSuite } from './gateway-faults.suite.js';

gatewayFaultsSuite(sqliteHarness);
