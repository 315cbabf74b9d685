import type { NoteRecord } from '../ports/storage.js';
import { type WireContext, wireTimestamp } from './wire-context.js';

/** A note as the service writes it (inside `{"note":{...}}`), timestamps as strings. */
export interface NoteJson {
  readonly id: number;
  readonly body: string;
  readonly sticky: boolean;
  readonly subscription_id: number;
  readonly created_at: string | null;
  readonly updated_at: string | null;
}

/** The fields of a note, unwrapped. */
export function noteJson(note: NoteRecord, context: WireContext): NoteJson {
  return {
    id: note.id,
    body: note.body,
    sticky: note.sticky,
    subscription_id: note.subscriptionId,
    created_at: wireTimestamp(note.createdAt, context),
    updated_at: wireTimestamp(note.updatedAt, context),
  };
}

/** `{"note":{...}}`, the body of a note create, read or update, and the item of a list. */
export function serializeNote(note: NoteRecord, context: WireContext): { note: NoteJson } {
  return { note: noteJson(note, context) };
}
