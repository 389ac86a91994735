// An Apache Kafka broker of one test file's own, for faults that must not reach the other tests: killed,
// frozen, or started again on its data. Free ports and a fresh directory; it ends with the test process.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLocalKafka, type LocalKafka, type LocalKafkaOptions } from '../../deploy/local/src/apache-kafka';
import { freePort } from '../../deploy/local/src/local-ports';

export interface PrivateKafka {
  brokers: string[];
  /** Its data directory, as `npm run kafka:up` has .dev/kafka. */
  dataDir: string;
  /** The JVM's process id now (it changes when the broker is started again). */
  pid(): number;
  pause(): void;
  resume(): void;
  kill(): void;
  /** Starts the broker again on the same data and ports, as after a crash. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrivateKafka(): Promise<PrivateKafka> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fleet-private-kafka-'));
  const options: LocalKafkaOptions = { dataDir, port: await freePort(), controllerPort: await freePort(), tiedToThisProcess: true };
  let kafka: LocalKafka = await startLocalKafka(options);
  return {
    brokers: kafka.brokers,
    dataDir,
    pid: () => kafka.pid,
    pause: () => kafka.signal('SIGSTOP'),
    resume: () => kafka.signal('SIGCONT'),
    kill: () => kafka.signal('SIGKILL'),
    async restart() {
      kafka = await startLocalKafka(options);
    },
    async stop() {
      try {
        kafka.signal('SIGCONT');
      } catch {
        // Already gone.
      }
      await kafka.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
