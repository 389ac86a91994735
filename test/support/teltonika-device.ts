// A Teltonika tracker's end of a TCP connection, as the tests speak it: the IMEI handshake, packets, and
// the acknowledgements read back as they arrive.
import net from 'node:net';
import { imeiHandshake } from '../../services/teltonika/src/codec';

/** A device's end of a connection: what it sends, and the bytes it reads back as they arrive. */
export class TeltonikaDevice {
  private readonly socket: net.Socket;
  private received = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  readonly closed: Promise<void>;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.waiting?.();
    });
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    void this.closed.then(() => this.waiting?.());
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** The next `count` bytes, or what arrived before the connection closed. */
  async read(count: number): Promise<Buffer> {
    let open = true;
    void this.closed.then(() => (open = false));
    while (this.received.length < count && open) await new Promise<void>((resolve) => (this.waiting = resolve));
    const bytes = this.received.subarray(0, count);
    this.received = this.received.subarray(bytes.length);
    return bytes;
  }

  async handshake(imei: string): Promise<number | undefined> {
    this.send(imeiHandshake(imei));
    return (await this.read(1))[0];
  }

  /** Sends a packet and reads its acknowledgement: the record count, or undefined when none came before close. */
  async packet(bytes: Buffer): Promise<number | undefined> {
    this.send(bytes);
    const ack = await this.read(4);
    return ack.length === 4 ? ack.readUInt32BE(0) : undefined;
  }

  end(): void {
    this.socket.destroy();
  }
}
