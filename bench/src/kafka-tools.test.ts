import { parseProducerPerformance, parseRequestCounts, requestsBetween } from './kafka-tools';

test("ProducerPerformance's closing summary gives the records sent, their rate and the 99th percentile", () => {
  const output = [
    '2499 records sent, 494.3 records/sec (0.14 MB/sec), 21.0 ms avg latency, 443.0 ms max latency.',
    '2500 records sent, 492.805046 records/sec (0.14 MB/sec), 21.03 ms avg latency, 443.00 ms max latency, 7 ms 50th, 139 ms 95th, 158 ms 99th, 159 ms 99.9th.',
    '',
  ].join('\n');
  expect(parseProducerPerformance(output)).toEqual({ records: 2500, recordsPerSecond: 492.805046, p99Ms: 158 });
  expect(() => parseProducerPerformance('Exception in thread "main" org.apache.kafka.common.errors.TimeoutException')).toThrow(
    /no summary/,
  );
});

test("JmxTool's one-time CSV becomes each API's count, its versions summed, other MBeans and the time left out", () => {
  const output = [
    'Trying to connect to JMX url: service:jmx:rmi:///jndi/rmi://127.0.0.1:19099/jmxrmi',
    '"time","kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Fetch,version=16:Count",' +
      '"kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,version=9:Count",' +
      '"kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,version=11:Count"',
    '1795847760420,40,2,660',
  ].join('\n');
  expect(parseRequestCounts(output)).toEqual({ Fetch: 40, Produce: 662 });
  expect(() => parseRequestCounts('Trying to connect to JMX url: …\nconnection refused')).toThrow(/no counts/);
});

test('the requests between two readings are the differences, busiest first, with idle APIs and unread readings left out', () => {
  expect(requestsBetween({ Produce: 10, Fetch: 5, Heartbeat: 3 }, { Produce: 30, Fetch: 45, Heartbeat: 3, Metadata: 1 })).toEqual({
    Fetch: 40,
    Produce: 20,
    Metadata: 1,
  });
  expect(Object.keys(requestsBetween({ Produce: 10, Fetch: 5 }, { Produce: 30, Fetch: 45 })!)).toEqual(['Fetch', 'Produce']);
  expect(requestsBetween(null, { Produce: 1 })).toBeNull();
  expect(requestsBetween({ Produce: 1 }, null)).toBeNull();
});
