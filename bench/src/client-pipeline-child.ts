// One client running the pipeline of pipeline-clients.ts in a process of its own, so that its CPU is its
// own: told a step (a rate and a duration) by the parent, it paces commands at that rate, waits for their
// replies, and answers how many were confirmed and how long each round trip took.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PIPELINE_CLIENTS, type PipelineClientName, type PipelineStep, type PipelineStepResult } from './client-pipeline';
import { pipelineClient } from './pipeline-clients';
import { quantileMs } from './teltonika-load';

/** How long a step waits after its last command for the replies still due. */
const REPLY_GRACE_MS = 5000;

async function main(): Promise<void> {
  const [name, brokers, commands, replies, group] = process.argv.slice(2);
  if (!PIPELINE_CLIENTS.includes(name as PipelineClientName) || !brokers || !commands || !replies || !group) {
    throw new Error('usage: client-pipeline-child <client> <brokers> <commands topic> <replies topic> <group>');
  }
  const client = pipelineClient(name as PipelineClientName, brokers.split(','), { commands, replies }, group);
  const waiting = new Map<string, number>();
  const roundTrips: number[] = [];
  await client.start((correlationId) => {
    const sentAt = waiting.get(correlationId);
    if (sentAt === undefined) return;
    waiting.delete(correlationId);
    roundTrips.push(performance.now() - sentAt);
  });
  process.on('message', (message: PipelineStep | 'stop') => {
    if (message === 'stop') {
      void client.stop().then(() => process.exit(0));
      return;
    }
    void runStep(message).then((result) => process.send!(result));
  });
  process.send!('ready');

  async function runStep({ ratePerSecond, seconds }: PipelineStep): Promise<PipelineStepResult> {
    roundTrips.length = 0;
    const total = Math.round(ratePerSecond * seconds);
    const startedAt = performance.now();
    for (let index = 0; index < total; index += 1) {
      const due = startedAt + (index * 1000) / ratePerSecond;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const correlationId = randomUUID();
      waiting.set(correlationId, performance.now());
      // A device of its own, so the commands spread over the partitions as a fleet's do.
      // A send that fails is a command never replied to, counted as such.
      client.send(`35${String(index).padStart(13, '0')}`, correlationId).catch(() => waiting.delete(correlationId));
    }
    const rest = startedAt + seconds * 1000 - performance.now();
    if (rest > 0) await sleep(rest);
    const graceUntil = performance.now() + REPLY_GRACE_MS;
    while (waiting.size > 0 && performance.now() < graceUntil) await sleep(50);
    waiting.clear();
    const sorted = [...roundTrips].sort((a, b) => a - b);
    return { sent: total, replied: sorted.length, p50Ms: quantileMs(sorted, 0.5), p99Ms: quantileMs(sorted, 0.99) };
  }
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
