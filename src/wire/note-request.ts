import { z } from 'zod';
import type { NoteInput } from '../services/note-service.js';
import { defineWireRequest } from './wire-request.js';
import { wireBoolean, wireText } from './wire-scalars.js';

/**
 * The fields of `{"note":{...}}`: `body` and `sticky`, read into a
 * {@link NoteInput}. A missing body is handed on for the engine to report ("Body: cannot be
 * blank."); on an update only the fields sent change.
 */
export const noteFields = z
  .object({ body: wireText.nullish(), sticky: wireBoolean.nullish() }, { error: 'must be an object.' })
  .transform(
    (n): NoteInput => ({
      ...(n.body === undefined ? {} : { body: n.body }),
      ...(n.sticky == null ? {} : { sticky: n.sticky }),
    }),
  );

/** `POST /subscriptions/{id}/notes.json` and `PUT /subscriptions/{id}/notes/{note_id}.json`: body `{"note":{body, sticky}}`. */
export const noteRequest = defineWireRequest('note', noteFields);
