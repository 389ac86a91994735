// The bench's fleet apps: streams following the devices that trip creates post for, each event's arrival
// timed, so that a scenario can report how long after a post's 200 its position reached its stream.
import type { ScenarioResult } from './bench-types';
import { tripOfOneOf } from './bench-requests';
import type { LoadRequest } from './load-driver';
import { quantileMs } from './teltonika-load';

export const LIVE_STREAMS = 100;
export const DEVICES_PER_STREAM = 10;
export const LIVE_STREAMS_SCENARIO = `trip create, followed live on ${LIVE_STREAMS} streams`;

export interface StreamDelay {
  /** Events received whose post's 200 was seen in the measured window. */
  events: number;
  p50Ms: number;
  p99Ms: number;
}

/** The bench devices the streams follow: LIVE_STREAMS × DEVICES_PER_STREAM of them. */
export function followedDevices(prefix: string): string[][] {
  return Array.from({ length: LIVE_STREAMS }, (_, stream) =>
    Array.from({ length: DEVICES_PER_STREAM }, (_, device) => `${prefix}s${stream}d${device}`),
  );
}

export class LiveStreams {
  /** When each event arrived (performance.now()), by the position's id. */
  private readonly arrivals = new Map<number, number>();
  /** When each post's 200 arrived, by the id it answered. */
  private readonly answers = new Map<number, number>();
  private readonly controller = new AbortController();
  private readonly reading: Array<Promise<void>> = [];

  private constructor() {}

  /** Opens one stream per group of devices; resolves once every stream is answered 200. */
  static async open(gatewayUrl: string, groups: string[][], headers: () => Record<string, string>): Promise<LiveStreams> {
    const streams = new LiveStreams();
    await Promise.all(
      groups.map(async (imeis) => {
        const query = imeis.map((imei) => `imei=${encodeURIComponent(imei)}`).join('&');
        const response = await fetch(`${gatewayUrl}/fleet/api/v1/positions/stream?${query}`, {
          headers: headers(),
          signal: streams.controller.signal,
        });
        if (response.status !== 200) throw new Error(`a bench stream was answered ${response.status}`);
        streams.reading.push(streams.read(response.body!.getReader()));
      }),
    );
    return streams;
  }

  /** Called with each post's answer as it arrives. */
  answered(body: string): void {
    const id = (JSON.parse(body) as { data: { id: number } }).data.id;
    this.answers.set(id, performance.now());
  }

  /** Forgets what was seen so far (the warm-up's events). */
  reset(): void {
    this.arrivals.clear();
    this.answers.clear();
  }

  /**
   * The delay from each post's 200 to its event, over the posts answered since the last reset. An event
   * that arrives before its post's 200 (the writer announces it in the same produce as the reply) counts
   * as no delay: the app had it when the device did. A post whose event never came counts as missing.
   */
  delays(): StreamDelay & { missing: number } {
    const delays: number[] = [];
    let missing = 0;
    for (const [id, answeredAt] of this.answers) {
      const arrivedAt = this.arrivals.get(id);
      if (arrivedAt === undefined) missing += 1;
      else delays.push(Math.max(0, arrivedAt - answeredAt));
    }
    delays.sort((a, b) => a - b);
    return { events: delays.length, p50Ms: quantileMs(delays, 0.5), p99Ms: quantileMs(delays, 0.99), missing };
  }

  /** Resolves once every post answered so far has had its event, or after `timeoutMs`. */
  async settled(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && this.delays().missing > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  async close(): Promise<void> {
    this.controller.abort();
    await Promise.allSettled(this.reading);
  }

  private async read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let text = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        const now = performance.now();
        text += decoder.decode(value, { stream: true });
        const lastLine = text.lastIndexOf('\n');
        if (lastLine < 0) continue;
        for (const line of text.slice(0, lastLine).split('\n')) {
          // The event's id is the stream's cursor; the position's own id is in its data.
          if (line.startsWith('data: ')) this.arrivals.set((JSON.parse(line.slice(6)) as { id: number }).id, now);
        }
        text = text.slice(lastLine + 1);
      }
    } catch {
      // Aborted by close().
    }
  }
}

/** How long a followed create's event may take to arrive before the bench counts it missing. */
const STREAM_SETTLE_MS = 10_000;

/**
 * Fleet apps following devices live while the devices post: the trip creates of the scenario above,
 * each for one of the devices that 100 streams follow, ten each. The gateway's CPU beyond the plain
 * creates' is what delivering the events costs it.
 * `runScenario` measures the creates it is given and resolves with their result, to which the streams'
 * delays and missing events are added.
 */
export async function measureFollowedCreates(
  gatewayUrl: string,
  bearer: () => Record<string, string>,
  tripCreateJson: LoadRequest,
  runScenario: (request: LoadRequest) => Promise<ScenarioResult>,
): Promise<void> {
  const followed = followedDevices(`bl${process.pid}`);
  const devices = followed.flat();
  const live = await LiveStreams.open(gatewayUrl, followed, bearer);
  try {
    const followedCreate: LoadRequest = {
      ...tripCreateJson,
      body: () => JSON.stringify(tripOfOneOf(devices)),
      answered: (body) => live.answered(body),
      warmedUp: async () => {
        await live.settled(STREAM_SETTLE_MS);
        live.reset();
      },
    };
    const result = await runScenario(followedCreate);
    await live.settled(STREAM_SETTLE_MS);
    const { missing, ...streamDelay } = live.delays();
    result.streamDelay = streamDelay;
    result.errors += missing;
    process.stderr.write(
      `  ${LIVE_STREAMS_SCENARIO}: ${streamDelay.events} events, from the 200 to the event p50 ${streamDelay.p50Ms} ms, ` +
        `p99 ${streamDelay.p99Ms} ms, ${missing} missing\n`,
    );
  } finally {
    await live.close();
  }
}
