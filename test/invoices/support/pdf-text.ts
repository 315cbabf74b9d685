/**
 * The text of a PDF as pdfjs-dist reads it: every page's text items joined by spaces, pages by
 * newlines. A real PDF reader, so a test that finds the invoice number here finds what a person
 * opening the file sees, whatever compression the writer used.
 */

// pdfjs-dist 6 uses Promise.withResolvers, which Node 20 lacks (Node 22 has it); a standard
// polyfill keeps the tests running on the engine's oldest supported Node.
const promiseStatics = Promise as unknown as { withResolvers?: unknown };
if (typeof promiseStatics.withResolvers !== 'function') {
  promiseStatics.withResolvers = <T>() => {
    let resolve!: (value: T | PromiseLike<T>) => void;
    let reject!: (reason?: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

export interface PdfContent {
  readonly pages: number;
  readonly text: string;
  readonly title: string | undefined;
}

export async function readPdf(bytes: Uint8Array): Promise<PdfContent> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  // pdfjs may transfer the buffer to its worker, and refuses a Node Buffer: hand it a plain copy.
  const task = pdfjs.getDocument({ data: new Uint8Array(bytes), verbosity: 0 });
  const document = await task.promise;
  try {
    const pages: string[] = [];
    for (let n = 1; n <= document.numPages; n += 1) {
      const page = await document.getPage(n);
      const content = await page.getTextContent();
      pages.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
    }
    const metadata = await document.getMetadata();
    const info = metadata.info as { Title?: string } | undefined;
    return { pages: document.numPages, text: pages.join('\n'), title: info?.Title };
  } finally {
    await task.destroy();
  }
}

/** The text with runs of whitespace collapsed, for `toContain` on phrases that wrap or split into items. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ');
}
