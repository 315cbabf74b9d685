import type { CredentialsRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** API keys and direct credentials over the memory tables. */
export function memoryCredentials(state: MemoryState, journal: Journal): CredentialsRepository {
  return {
    async insertApiKey(key) {
      return state.apiKeys.insert(journal, { ...key, id: state.apiKeys.nextId() });
    },
    async activeApiKeys(siteId) {
      return state.apiKeys.filter((k) => k.siteId === siteId && k.revokedAt === null);
    },
    async revokeApiKey(siteId, keyId, at) {
      const key = state.apiKeys.get(keyId);
      if (key === undefined || key.siteId !== siteId || key.revokedAt !== null) return false;
      state.apiKeys.replace(journal, { ...key, revokedAt: at });
      return true;
    },
    async insertDirect(credential) {
      return state.directCredentials.insert(journal, { ...credential, id: state.directCredentials.nextId() });
    },
    async findDirectByApiId(apiId) {
      return state.directCredentials.find((c) => c.apiId === apiId && c.revokedAt === null);
    },
    async activeDirect(siteId) {
      return state.directCredentials.filter((c) => c.siteId === siteId && c.revokedAt === null);
    },
    async revokeDirect(siteId, at) {
      const active = state.directCredentials.filter((c) => c.siteId === siteId && c.revokedAt === null);
      for (const c of active) state.directCredentials.replace(journal, { ...c, revokedAt: at });
      return active.length;
    },
  };
}
