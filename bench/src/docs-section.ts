// Sections of the docs that are generated from committed results, never copied by hand: each lies
// between two markers, its generator rewrites what is between them, and a test holds the text there
// equal to what the results give. `npm run bench` writes docs/performance.md's from bench/results; the
// fault tests, recording, write docs/reliability.md's from test/reliability/results.
export interface GeneratedSection {
  start: string;
  end: string;
}

/** The last bench run, as bench/results/latest.md holds it. */
export const BENCH_RESULTS: GeneratedSection = {
  start: '<!-- bench results: written by `npm run bench` from bench/results/latest.md; do not edit by hand -->',
  end: '<!-- end of bench results -->',
};

/** Every recorded bench run, one row each, from bench/results/history.jsonl (docs/performance-history.md). */
export const BENCH_HISTORY: GeneratedSection = {
  start: '<!-- bench history: written by `npm run bench` from bench/results/history.jsonl; do not edit by hand -->',
  end: '<!-- end of bench history -->',
};

/** The text between a section's markers, or undefined when the document has none. */
export function sectionOf(document: string, section: GeneratedSection): string | undefined {
  const start = document.indexOf(section.start);
  const end = document.indexOf(section.end);
  if (start < 0 || end < start) return undefined;
  return document.slice(start + section.start.length, end).trim();
}

/** The document with the text between a section's markers replaced by `text`. */
export function withSection(document: string, section: GeneratedSection, text: string): string {
  const start = document.indexOf(section.start);
  const end = document.indexOf(section.end);
  if (start < 0 || end < start) throw new Error(`the document has no ${section.start} ... ${section.end} section`);
  return `${document.slice(0, start + section.start.length)}\n\n${text.trim()}\n\n${document.slice(end)}`;
}
