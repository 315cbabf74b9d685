import type { NotesRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Notes over the memory tables. */
export function memoryNotes(state: MemoryState, journal: Journal): NotesRepository {
  return {
    async insert(note) {
      return state.notes.insert(journal, { ...note, id: state.notes.nextId() });
    },
    async findById(siteId, id) {
      const note = state.notes.get(id);
      return note?.siteId === siteId ? note : undefined;
    },
    async listForSubscription(siteId, subscriptionId) {
      return state.notes.filter((n) => n.siteId === siteId && n.subscriptionId === subscriptionId);
    },
    async update(siteId, id, patch) {
      const note = state.notes.get(id);
      if (note === undefined || note.siteId !== siteId) return undefined;
      return state.notes.replace(journal, { ...note, ...patch });
    },
    async delete(siteId, id) {
      const note = state.notes.peek(id);
      if (note === undefined || note.siteId !== siteId) return false;
      return state.notes.delete(journal, id);
    },
  };
}
