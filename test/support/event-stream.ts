// A live position stream as a fleet app reads it: the events received so far and whether the stream has
// ended. With `reconnect`, it behaves as a browser's EventSource does when its connection drops: it
// connects again, sending the id of the last event it received as Last-Event-ID, until it is closed.
import { setTimeout as sleep } from 'node:timers/promises';

export interface ReceivedEvent {
  event: string;
  id: string;
  data: any;
}

export interface StreamOptions {
  /** Connect again after the stream drops, as EventSource does (every `retryMs`). */
  reconnect?: boolean;
  retryMs?: number;
}

export class EventStream {
  readonly events: ReceivedEvent[] = [];
  /** The connections this stream made; more than one once it has reconnected. */
  connections = 0;
  ended = false;
  status = 0;
  body: any;
  private lastEventId: string | undefined;
  private readonly controller = new AbortController();
  /** Aborts the current connection alone (drop()); the stream connects again if it reconnects. */
  private connection = new AbortController();

  private constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
    private readonly options: StreamOptions,
  ) {
    this.lastEventId = headers['last-event-id'];
  }

  /** Opens the stream; resolves once the first answer's status is known. */
  static async open(url: string, headers: Record<string, string>, options: StreamOptions = {}): Promise<EventStream> {
    const stream = new EventStream(url, headers, options);
    const reader = await stream.connect();
    if (reader) void stream.readAndReconnect(reader);
    return stream;
  }

  /** The ids of the positions received (each event's data.id), in the order received. */
  ids(): number[] {
    return this.events.map((received) => Number(received.data.id));
  }

  /** Drops the current connection, as a network fault would; with `reconnect` the stream resumes. */
  drop(): void {
    this.connection.abort();
    this.connection = new AbortController();
  }

  close(): void {
    this.ended = true;
    this.controller.abort();
  }

  private async connect(): Promise<ReadableStreamDefaultReader<Uint8Array> | undefined> {
    const headers = { ...this.headers };
    if (this.lastEventId !== undefined) headers['last-event-id'] = this.lastEventId;
    const response = await fetch(this.url, { headers, signal: AbortSignal.any([this.controller.signal, this.connection.signal]) });
    this.connections += 1;
    this.status = response.status;
    if (response.status !== 200) {
      this.body = await response.json();
      return undefined;
    }
    return response.body!.getReader();
  }

  private async readAndReconnect(first: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined = first;
    while (!this.controller.signal.aborted) {
      if (reader) await this.read(reader);
      if (!this.options.reconnect || this.controller.signal.aborted) break;
      await sleep(this.options.retryMs ?? 200);
      reader = await this.connect().catch(() => undefined);
    }
    this.ended = true;
  }

  private async read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let text = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          this.take(text.slice(0, end));
          text = text.slice(end + 2);
        }
      }
    } catch {
      // The connection dropped, or close() aborted it.
    }
  }

  private take(block: string): void {
    const fields = Object.fromEntries(
      block
        .split('\n')
        .filter((line) => !line.startsWith(':') && line.includes(':'))
        .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
    );
    if (!fields.event || !fields.data) return;
    this.events.push({ event: fields.event, id: fields.id ?? '', data: JSON.parse(fields.data) });
    if (fields.id) this.lastEventId = fields.id;
  }
}
