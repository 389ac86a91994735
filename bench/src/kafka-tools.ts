// Kafka's own tools, from the jars Maven resolves beside the broker's: ProducerPerformance, the yardstick
// the replication scenario measures the system's broker cost against, and JmxTool, which reads a broker's
// request counts by API (kafka.network RequestMetrics) for the benchmark's account of where a create's
// broker CPU goes.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { KAFKA_DIR, resolveKafkaJars } from '@fleet/local-stack/apache-kafka';

const toolsClasspath = () => path.join(resolveKafkaJars(), 'lib', '*');
const log4j = () => `-Dlog4j.configuration=file:${path.join(KAFKA_DIR, 'log4j.properties')}`;
/** The tools are short-lived clients beside the measured processes: a small heap and a quick start. */
const TOOL_JVM = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];

export interface ProducerPerformanceResult {
  records: number;
  recordsPerSecond: number;
  p99Ms: number;
}

/**
 * ProducerPerformance's closing line: "N records sent, R records/sec (… MB/sec), … ms avg latency, … ms
 * max latency, … ms 50th, … ms 95th, P ms 99th, … ms 99.9th."
 */
export function parseProducerPerformance(output: string): ProducerPerformanceResult {
  const summary = output
    .trim()
    .split('\n')
    .reverse()
    .find((line) => /ms 99th/.test(line));
  const match = summary && /^(\d+) records sent, ([\d.]+) records\/sec .* (\d+) ms 99th/.exec(summary.trim());
  if (!match) throw new Error(`ProducerPerformance printed no summary: ${output.trim().split('\n').slice(-3).join(' | ')}`);
  return { records: Number(match[1]), recordsPerSecond: Number(match[2]), p99Ms: Number(match[3]) };
}

export interface ProducerPerformanceOptions {
  brokers: string;
  topic: string;
  recordsPerSecond: number;
  seconds: number;
  /** Bytes of each record; 300 is about a create's command. */
  recordSize?: number;
}

/**
 * Kafka's own producer, paced at `recordsPerSecond` for `seconds`, acks=all and linger 5 ms as the
 * system's producers are configured; resolves with what it reported.
 */
export function producerPerformance(options: ProducerPerformanceOptions): Promise<ProducerPerformanceResult> {
  const { brokers, topic, recordsPerSecond, seconds, recordSize = 300 } = options;
  const args = [
    ...TOOL_JVM,
    log4j(),
    '-cp',
    toolsClasspath(),
    'org.apache.kafka.tools.ProducerPerformance',
    '--topic',
    topic,
    '--num-records',
    String(Math.round(recordsPerSecond * seconds)),
    '--record-size',
    String(recordSize),
    '--throughput',
    String(recordsPerSecond),
    '--producer-props',
    `bootstrap.servers=${brokers}`,
    'acks=all',
    'linger.ms=5',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0)
        return reject(new Error(`ProducerPerformance exited with ${code}: ${output.trim().split('\n').slice(-3).join(' | ')}`));
      try {
        resolve(parseProducerPerformance(output));
      } catch (error) {
        reject(error as Error);
      }
    });
  });
}

/** Requests a broker has handled since it started, by API (Produce, Fetch, Heartbeat, …), all versions summed. */
export type RequestCounts = Record<string, number>;

/**
 * JmxTool's one-time CSV: a header of quoted MBean attribute names, then one line of values, the first
 * column the time.
 */
export function parseRequestCounts(output: string): RequestCounts {
  const lines = output
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('"') || /^\d/.test(line));
  const header = lines.find((line) => line.startsWith('"'));
  const values = lines.find((line) => /^\d/.test(line));
  if (!header || !values) throw new Error(`JmxTool printed no counts: ${output.trim().split('\n').slice(-2).join(' | ')}`);
  const names = header.split('","').map((name) => name.replace(/"/g, ''));
  const numbers = values.split(',').map(Number);
  const counts: RequestCounts = {};
  names.forEach((name, index) => {
    const api = /request=([A-Za-z]+)/.exec(name)?.[1];
    if (api) counts[api] = (counts[api] ?? 0) + (numbers[index] ?? 0);
  });
  return counts;
}

/** The requests one broker, its MBeans open on `jmxPort`, has handled by API; null when it does not answer. */
export function requestCounts(jmxPort: number): RequestCounts | null {
  const result = spawnSync(
    'java',
    [
      ...TOOL_JVM,
      log4j(),
      '-cp',
      toolsClasspath(),
      'org.apache.kafka.tools.JmxTool',
      '--jmx-url',
      `service:jmx:rmi:///jndi/rmi://127.0.0.1:${jmxPort}/jmxrmi`,
      '--object-name',
      'kafka.network:type=RequestMetrics,name=RequestsPerSec,*',
      '--attributes',
      'Count',
      '--one-time',
      'true',
    ],
    { encoding: 'utf8', timeout: 30_000 },
  );
  if (result.status !== 0) return null;
  try {
    return parseRequestCounts(result.stdout);
  } catch {
    return null;
  }
}

/** Several brokers' counts summed (a cluster's), or null when any did not answer. */
export function clusterRequestCounts(jmxPorts: readonly number[]): RequestCounts | null {
  const total: RequestCounts = {};
  for (const port of jmxPorts) {
    const counts = requestCounts(port);
    if (counts === null) return null;
    for (const [api, count] of Object.entries(counts)) total[api] = (total[api] ?? 0) + count;
  }
  return total;
}

/** The requests handled between two readings, by API, busiest first; APIs with none left out. */
export function requestsBetween(before: RequestCounts | null, after: RequestCounts | null): RequestCounts | null {
  if (before === null || after === null) return null;
  const between = Object.entries(after)
    .map(([api, count]) => [api, count - (before[api] ?? 0)] as const)
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1]);
  return Object.fromEntries(between);
}
