// docs/performance.md shows the last committed run as the bench printed it: `npm run bench` writes
// bench/results/latest.md and puts the same text between these markers, and a test holds the two equal,
// so the figures in the docs are the results', never copied by hand.
export const RESULTS_START = '<!-- bench results: written by `npm run bench` from bench/results/latest.md; do not edit by hand -->';
export const RESULTS_END = '<!-- end of bench results -->';

/** The results between the markers of a document, or undefined when it has none. */
export function resultsSection(document: string): string | undefined {
  const start = document.indexOf(RESULTS_START);
  const end = document.indexOf(RESULTS_END);
  if (start < 0 || end < start) return undefined;
  return document.slice(start + RESULTS_START.length, end).trim();
}

/** The document with the results between its markers replaced by `results`. */
export function withResults(document: string, results: string): string {
  const start = document.indexOf(RESULTS_START);
  const end = document.indexOf(RESULTS_END);
  if (start < 0 || end < start) throw new Error(`the document has no ${RESULTS_START} ... ${RESULTS_END} section`);
  return `${document.slice(0, start + RESULTS_START.length)}\n\n${results.trim()}\n\n${document.slice(end)}`;
}
