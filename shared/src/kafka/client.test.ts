import { logLevel } from 'kafkajs';
import { createLogger } from '../logger';
import { trackClientOutage } from './client-outage';
import { kafkaLogLine } from './client';

function capture() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = createLogger('test', 'debug', { write: (line: string) => void lines.push(JSON.parse(line)) });
  let outages = 0;
  const log = kafkaLogLine(logger, trackClientOutage(logger, { started: () => (outages += 1), ended: () => undefined }));
  const entry = (level: logLevel, message: string, extra: Record<string, unknown> = {}) =>
    log({ namespace: 'test', level, label: 'ERROR', log: { timestamp: '', message, ...extra } });
  return { lines, entry, outages: () => outages };
}

describe("kafkajs's log lines", () => {
  test('a consumer restarted after its retries ran out on a settling answer is a warning, and no outage', () => {
    const { lines, entry, outages } = capture();
    entry(logLevel.ERROR, 'Crash: KafkaJSNumberOfRetriesExceeded: The group coordinator is not available', { groupId: 'g' });

    expect(lines.map(({ level, msg }) => ({ level, msg }))).toEqual([
      {
        level: 40,
        msg: 'kafka: Crash: KafkaJSNumberOfRetriesExceeded: The group coordinator is not available; restarting the consumer',
      },
    ]);
    expect(outages()).toBe(0);
  });

  test('a settling answer is debug; any other error opens an outage, logged at error', () => {
    const { lines, entry, outages } = capture();
    entry(logLevel.ERROR, 'Response Heartbeat', { error: 'The group is rebalancing, so a rejoin is needed' });
    // A topic just made, not yet known to every node: what a first `npm start` met while provisioning.
    entry(logLevel.ERROR, 'Response Metadata(key: 3, version: 6)', { error: 'This server does not host this topic-partition' });
    entry(logLevel.ERROR, 'Crash: KafkaJSConnectionError: Connection error: connect ECONNREFUSED');

    expect(lines.map(({ level }) => level)).toEqual([20, 20, 50]);
    expect(outages()).toBe(1);
  });
});
