import { memoryHarness } from '../support/storages.js';
import { couponScenarios } from './coupons.suite.js';

couponScenarios(memoryHarness);
