import { sqliteHarness } from '../support/sqlite.js';
import { couponScenarios } from './coupons.suite.js';

couponScenarios(sqliteHarness);
