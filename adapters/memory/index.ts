/** The in-memory storage adapter: `import { createMemoryStorage } from 'billing-engine/adapters/memory'`. */
export { createMemoryStorage, type MemoryStorageOptions } from './memory-storage.js';
