/**
 * The report: what is printed as the run goes, and the same content as Markdown for
 * `bench/results/latest.md`. Sections add headings, notes, tables, ratio lines and target
 * verdicts; the verdicts are gathered again in a summary at the end.
 */

/** A target of an issue and whether this run met it (`undefined`: not measured). */
export interface TargetVerdict {
  readonly section: string;
  readonly target: string;
  readonly met: boolean | undefined;
  readonly detail: string;
}

/** A cell that holds a figure (`12,840 (12,552-14,369)`, `2.08x`, `3.04 ms`, `n/a`), not a title like `1. Storage`. */
const NUMERIC_CELL = /^(n\/a$|\+?[\d,]+(\.\d+)?(?!\.)( |x|%|$))/;

/** Collects and prints the figures of one run. */
export class BenchReport {
  readonly #markdown: string[] = [];
  readonly #targets: TargetVerdict[] = [];
  #section = '';
  readonly #print: (line: string) => void;

  constructor(print: (line: string) => void = (line) => console.log(line)) {
    this.#print = print;
  }

  /** Starts a section: a heading on the console and a `##` heading in the file. */
  section(title: string): void {
    this.#section = title;
    this.#print('');
    this.#print(`== ${title} ==`);
    this.#markdown.push('', `## ${title}`, '');
  }

  /** A line of explanation (what is measured, what the baseline writes, why something skipped). */
  note(text: string): void {
    this.#print(text);
    this.#markdown.push(text, '');
  }

  /** A table: aligned columns on the console, a pipe table in the file. */
  table(columns: readonly string[], rows: readonly (readonly string[])[]): void {
    const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => (r[i] ?? '').length)));
    // Figures line up on the right, words on the left.
    const numeric = columns.map((_, i) => rows.length > 0 && rows.every((r) => NUMERIC_CELL.test(r[i] ?? '')));
    const line = (cells: readonly string[]) =>
      cells
        .map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd();
    this.#print(line(columns));
    this.#print(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const row of rows) this.#print(line(row));
    const escapeCell = (cell: string) => cell.replace(/\|/g, '\\|');
    this.#markdown.push(`| ${columns.map(escapeCell).join(' | ')} |`);
    this.#markdown.push(`|${numeric.map((right) => (right ? ' ---: ' : ' --- ')).join('|')}|`);
    for (const row of rows) this.#markdown.push(`| ${row.map(escapeCell).join(' | ')} |`);
    this.#markdown.push('');
  }

  /**
   * A ratio line, always starting with `ratio`, so a reader (and the smoke test) can find every
   * comparison of the engine with its raw baseline.
   */
  ratio(text: string): void {
    const line = `ratio ${text}`;
    this.#print(line);
    this.#markdown.push(`- ${line}`);
  }

  /** A target verdict: printed now and repeated in the summary. */
  target(target: string, met: boolean | undefined, detail: string): void {
    this.#targets.push({ section: this.#section, target, met, detail });
    const verdict = met === undefined ? 'NOT MEASURED' : met ? 'MET' : 'MISSED';
    const line = `target ${target}: ${verdict} (${detail})`;
    this.#print(line);
    this.#markdown.push(`- **${verdict}** ${target}: ${detail}`, '');
  }

  /** Every verdict so far. */
  get targets(): readonly TargetVerdict[] {
    return this.#targets;
  }

  /** The body of the Markdown report (sections only; the caller adds the header). */
  markdownBody(): string {
    return this.#markdown.join('\n');
  }
}
