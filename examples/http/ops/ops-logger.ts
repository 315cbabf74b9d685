/**
 * What the HTTP app, the work loop and the shutdown need of a logger: structured fields and a
 * message, at four levels. A pino logger (see logger.ts) is one; an application that mounts the app
 * may pass its own pino instance, or anything with these methods, so the app itself needs no pino.
 */
export interface OpsLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
