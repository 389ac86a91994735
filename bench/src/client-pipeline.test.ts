import { clientPipelineTable, type ClientStepFigures } from './client-pipeline';

const step = (client: ClientStepFigures['client'], ratePerSecond: number, clientCpu: number, brokerCpu: number): ClientStepFigures => ({
  client,
  ratePerSecond,
  clientCpu,
  brokerCpu,
  brokerRequests: { Fetch: 97.2, Produce: 97.1, Heartbeat: 0.7, Metadata: 0.2 },
  result: { sent: ratePerSecond * 20, replied: ratePerSecond * 20, p50Ms: 3, p99Ms: 6 },
});

describe('clientPipelineTable', () => {
  it('gives each client and step its CPU shares, the CPU of both a create, its round trip and the requests the broker handled a second', () => {
    const table = clientPipelineTable([step('kafkajs', 0, 0.006, 0.078), step('@platformatic/kafka', 50, 0.102, 0.143)]).split('\n');
    expect(table[2]).toBe('| kafkajs | at rest | 0.6% | 7.8% |  |  | 0/0 | Fetch 97.2, Produce 97.1, Heartbeat 0.7 |');
    expect(table[3]).toBe(
      '| @platformatic/kafka | 50 creates/s | 10.2% | 14.3% | 4900 | 3 / 6 | 1000/1000 | Fetch 97.2, Produce 97.1, Heartbeat 0.7 |',
    );
  });
});
