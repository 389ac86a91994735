// Reading a Prometheus text exposition in tests: scrape an endpoint and sum the samples of a metric
// whose labels include the given ones.
import { eventually } from './eventually';

export interface Scrape {
  contentType: string | null;
  text: string;
  /** The sum of the samples of `name` whose labels include `labels`; 0 when there is none. */
  value(name: string, labels?: Record<string, string>): number;
  has(name: string): boolean;
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) throw new Error(`unreadable sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, (_all, char: string) => (char === 'n' ? '\n' : char));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
  const text = await response.text();
  const samples = parse(text);
  return {
    contentType: response.headers.get('content-type'),
    text,
    value(name, labels = {}) {
      return samples
        .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
        .reduce((sum, sample) => sum + sample.value, 0);
    },
    has(name) {
      return samples.some((sample) => sample.name === name);
    },
  };
}

/** Scrapes until `ready` accepts the scrape: writer counters move just after the reply is sent. */
export async function scrapeUntil(url: string, ready: (scrape: Scrape) => boolean, timeoutMs = 10_000): Promise<Scrape> {
  let last: Scrape | undefined;
  const readyScrape = async () => {
    last = await scrape(url);
    return ready(last) ? last : undefined;
  };
  // Past the timeout the last scrape is returned, so the test's own assertion shows what it holds.
  return eventually(readyScrape, timeoutMs, { intervalMs: 100 }).catch(async () => last ?? scrape(url));
}
