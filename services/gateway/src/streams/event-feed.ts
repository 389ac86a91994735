// The committed events a gateway's event streams need. The processor notifies the events channel in
// the transaction that commits them; the feed LISTENs on one connection of its own (opened by the first
// stream) and, told of new events (or every FALLBACK_POLL_MS, should a notification be missed while it
// reconnects), reads those past the last it read and hands them to every stream in id order. Ids grow in
// commit order, so "past the last read" misses nothing. A gateway with no stream open reads nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import type { Logger } from '@fleet/shared/logger';
import { EVENT_COLUMNS, EVENTS_CHANNEL, fleetEvent, type EventRow, type FleetEvent } from '@fleet/shared/events/fleet-event';

export type DeliverEvents = (events: readonly FleetEvent[]) => void;

/** Events read per statement while catching up. */
const READ_CHUNK = 1000;
const FALLBACK_POLL_MS = 5000;
const RECONNECT_MS = 1000;

export interface EventFeedOptions {
  connectionString: string;
  logger: Logger;
}

export class EventFeed {
  private client: Client | undefined;
  private starting: Promise<void> | undefined;
  private readonly subscribers = new Set<DeliverEvents>();
  private lastRead = 0;
  private reading: Promise<void> | undefined;
  private again = false;
  private readonly stopping = new AbortController();
  private poll: NodeJS.Timeout | undefined;

  constructor(private readonly options: EventFeedOptions) {}

  /** Resolves once the feed listens; the first call connects it. */
  ready(): Promise<void> {
    if (this.stopped()) return Promise.reject(new Error('the events feed is stopped'));
    this.starting ??= this.connect().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  /** The id past which a stream opened now starts. */
  position(): number {
    return this.lastRead;
  }

  subscribe(deliver: DeliverEvents): () => void {
    this.subscribers.add(deliver);
    return () => this.subscribers.delete(deliver);
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    clearInterval(this.poll);
    // A first connection under way closes itself once it sees the feed stopped.
    await this.starting?.catch(() => undefined);
    await this.reading?.catch(() => undefined);
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.options.connectionString, application_name: 'fleet-gateway-events' });
    client.on('notification', () => this.readNew());
    client.on('error', (error) => {
      this.options.logger.warn({ err: error.message }, 'the events feed lost PostgreSQL; reconnecting');
      void client.end().catch(() => undefined);
      if (this.client === client) this.client = undefined;
      void this.reconnect();
    });
    let last: number;
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      const { rows } = await client.query<{ last: string }>('SELECT coalesce(max(id), 0) AS last FROM events');
      last = Number(rows[0]!.last);
      if (this.stopped()) throw new Error('the events feed is stopped');
    } catch (error) {
      // A connection that did not become the feed's (it failed half-way, or the gateway stopped meanwhile)
      // is closed here: nothing else knows of it.
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.lastRead === 0) this.lastRead = last;
    this.client = client;
    this.poll ??= setInterval(() => this.readNew(), FALLBACK_POLL_MS);
    this.poll.unref();
    // Whatever was committed while it was away.
    this.readNew();
  }

  private stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  private async reconnect(): Promise<void> {
    while (!this.stopped() && !this.client) {
      // A stop ends the pause, and the loop with it.
      await sleep(RECONNECT_MS, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      if (this.stopped()) return;
      await this.connect().catch((error: Error) =>
        this.options.logger.warn({ err: error.message }, 'the events feed cannot reach PostgreSQL yet'),
      );
    }
  }

  /** Reads every event past the last read; a call while one runs makes it look once more when done. */
  private readNew(): void {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.readAll()
      .catch((error: Error) => this.options.logger.warn({ err: error.message }, 'the events feed could not read events'))
      .finally(() => {
        this.reading = undefined;
        if (this.again && !this.stopped()) {
          this.again = false;
          this.readNew();
        }
      });
  }

  private async readAll(): Promise<void> {
    for (;;) {
      const client = this.client;
      if (!client || this.stopped()) return;
      const { rows } = await client.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE id > $1 ORDER BY id LIMIT ${READ_CHUNK}`, [
        this.lastRead,
      ]);
      if (rows.length === 0) return;
      const events = rows.map(fleetEvent);
      this.lastRead = events.at(-1)!.id;
      for (const deliver of [...this.subscribers]) deliver(events);
      if (rows.length < READ_CHUNK) return;
    }
  }
}
