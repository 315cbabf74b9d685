/** Paging of repository lists. Same conventions as `storage.ts`. */

/** A page request: 1-based page, page size already clamped by the caller. */
export interface PageRequest {
  readonly page: number;
  readonly perPage: number;
}
