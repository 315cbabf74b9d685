import type { AccountsRepository, ExportsRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Prepayments and service credits over the memory tables (`state.accountTables`). */
export function memoryAccounts(_state: MemoryState, _journal: Journal): AccountsRepository {
  return {};
}

/** Data exports over the memory tables (`state.accountTables`). */
export function memoryExports(_state: MemoryState, _journal: Journal): ExportsRepository {
  return {};
}
