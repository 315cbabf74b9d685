/**
 * Where the engine learns the time. Domain code never reads the wall clock; services ask the
 * clock they were given, so a manual clock can drive years of billing in a test.
 */
export interface Clock {
  /** The current instant. Each call returns a new Date. */
  now(): Date;
}
