/**
 * The load generator's process: receives {@link LoadOptions} over IPC, answers each with its
 * {@link LoadResult}, and exits when the parent disconnects. Started by `http-endpoints.ts`.
 */
import { type LoadOptions, runLoad } from './http-load.js';

process.on('message', (message: LoadOptions) => {
  void runLoad(message).then(
    (result) => process.send?.({ ok: true, result }),
    (error: unknown) => process.send?.({ ok: false, error: error instanceof Error ? error.message : String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
