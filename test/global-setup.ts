/** Vitest global setup: nothing shared yet; adapters that need servers set them up per file. */
export default function setup(): void {}
