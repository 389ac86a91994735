// One device's TCP session: the IMEI handshake (01 for a registered device, 00 and close for any other),
// then AVL packets, each acknowledged with its record count only once all its records are committed.
// Before each packet is stored the registry is asked again (from its cache, REGISTRY_CACHE_MS), and the
// session of a device removed, or given a new key, since its handshake is closed without an
// acknowledgement: a removal takes effect on open connections too, not only on the next handshake.
// A packet is read whole however TCP splits or joins it; while one is being stored the socket is not
// read (TCP's window then holds the device back: a slow Kafka never grows this process's memory). A
// packet that fails its CRC or its structure is not acknowledged and stores nothing, and the connection
// is closed; so is one whose records could not be committed, and the device sends them again.
import type { Socket } from 'node:net';
import type { Logger } from '@fleet/shared/logger';
import { AppError } from '@fleet/shared/errors';
import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';
import type { DeviceRegistry } from '@fleet/write-path/devices/device-registry';
import type { CommandBus } from '@fleet/write-path/kafka/command-bus';

/** What a session sends its records through: the write path's CommandBus. */
export type RecordSender = Pick<CommandBus, 'requestLists'>;
import type { TrackerPositionSchema } from '@fleet/write-path/trip-request';
import { FrameReader, ProtocolError, type AvlPacket } from './codec';
import type { Refusal, TeltonikaMetrics } from './metrics';
import { positionOf } from './records';

export interface SessionDeps {
  registry: DeviceRegistry;
  bus: RecordSender;
  topic: string;
  trackerPosition: TrackerPositionSchema;
  /** The device rate limit; rejects (a 429 AppError) when the device sent too many positions. */
  admit(imei: string, positions: number): Promise<void>;
  metrics: TeltonikaMetrics;
  logger: Logger;
  idleTimeoutMs: number;
  handshakeTimeoutMs: number;
}

const ACCEPT = Buffer.from([0x01]);
const REFUSE = Buffer.from([0x00]);

function acknowledgement(records: number): Buffer {
  const ack = Buffer.alloc(4);
  ack.writeUInt32BE(records);
  return ack;
}

export function serveSession(socket: Socket, deps: SessionDeps): void {
  const reader = new FrameReader();
  let imei: string | undefined;
  /** The registration the handshake accepted. */
  let keySince = 0;
  let busy = false;
  let closed = false;
  const { metrics, logger } = deps;
  metrics.connectionOpened();
  socket.setNoDelay(true);
  socket.setKeepAlive(true, 60_000);
  socket.setTimeout(deps.handshakeTimeoutMs);

  const close = (reason: Refusal | undefined, detail?: string) => {
    if (closed) return;
    closed = true;
    if (reason) {
      metrics.refused(reason);
      logger.info({ imei, reason, detail, remote: socket.remoteAddress }, 'closing a Teltonika connection');
    }
    socket.end();
    socket.destroySoon();
  };

  socket.on('close', () => {
    closed = true;
    metrics.connectionClosed();
  });
  socket.on('error', () => undefined);
  socket.on('timeout', () => close(imei === undefined ? 'handshake-timeout' : 'idle'));
  socket.on('data', (chunk: Buffer) => {
    reader.push(chunk);
    void drain();
  });

  /** Handles whatever whole frames have arrived, one at a time, reading no more meanwhile. */
  async function drain(): Promise<void> {
    if (busy || closed) return;
    busy = true;
    socket.pause();
    try {
      while (!closed) {
        if (imei === undefined) {
          const offered = reader.imei();
          if (offered === undefined) break;
          const registration = await deps.registry.registration(offered);
          if (!registration) {
            socket.write(REFUSE);
            close('unregistered', offered);
            break;
          }
          imei = offered;
          keySince = registration.keySince;
          socket.setTimeout(deps.idleTimeoutMs);
          socket.write(ACCEPT);
          continue;
        }
        const frame = reader.packet();
        if (frame.kind === 'incomplete') break;
        if ((await deps.registry.registration(imei))?.keySince !== keySince) {
          close('unregistered', 'removed or given a new key since its handshake');
          break;
        }
        await store(imei, frame.packet);
      }
    } catch (error) {
      if (error instanceof ProtocolError) {
        metrics.packet('refused');
        close(error.reason, error.message);
      } else if (error instanceof AppError) {
        // Not committed (the broker or a writer away, or rate-limited): no acknowledgement, and the device
        // sends the packet again on its next connection.
        metrics.packet('failed');
        close(error.category === 'rateLimited' ? 'rejected' : 'unavailable', error.code);
      } else {
        metrics.packet('failed');
        logger.error({ err: error, imei }, 'a Teltonika packet failed');
        close('unavailable');
      }
    } finally {
      busy = false;
      if (!closed) socket.resume();
    }
  }

  async function store(device: string, packet: AvlPacket): Promise<void> {
    const receivedAt = new Date().toISOString();
    const commands: TripLocationCommand[] = [];
    for (const record of packet.records) {
      const parsed = deps.trackerPosition.safeParse(positionOf(device, record));
      if (parsed.success) commands.push({ ...parsed.data, receivedAt });
    }
    // Records outside the limits are acknowledged with their packet and dropped: refused, they would be
    // sent again for ever.
    const dropped = packet.records.length - commands.length;
    if (dropped > 0) metrics.records('dropped', dropped);
    if (commands.length > 0) {
      await deps.admit(device, commands.length);
      const [replies] = await deps.bus.requestLists([{ topic: deps.topic, key: device, values: commands, headers: {} }]);
      let stored = 0;
      for (const reply of replies!) {
        if (reply.ok) stored += 1;
        // A record the writer refused, or set aside as a dead letter for an operator, is settled: only an
        // outage leaves the packet to be sent again.
        else if (AppError.fromCode(reply.code, reply.detail).category === 'unavailable') throw AppError.fromCode(reply.code, reply.detail);
      }
      metrics.records('stored', stored);
      if (stored < commands.length) metrics.records('dropped', commands.length - stored);
    }
    if (closed) return;
    socket.write(acknowledgement(packet.records.length));
    metrics.packet('acknowledged');
  }
}
