// Fault 7: messages no writer can store arrive between valid commands: bytes that are not JSON, an empty
// value, JSON the command schema refuses, and commands the schema passes but PostgreSQL refuses (a
// year 0000 position, a group command id with a NUL byte). Each lands on the dead-letter topic with its
// reason and source; the writer processes go on, and every valid command is stored once.
import { closeKafka, produceRaw, readTopic } from '../support/kafka';
import { randomUUID } from 'node:crypto';
import { buildTrip, closeDb, db } from '../support/harness';
import { spawnService, stopAllServices } from '../support/processes';
import { audit, expectPromiseKept, printFigures, problemsLogged } from './fault-audit';
import { authorization, startLoad } from './fault-load';
import { type ProcessStack } from '../support/process-stack';
import { metricValue } from './fault-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

let stack: ProcessStack;

beforeAll(async () => {
  stack = await startStack({ mode: 'processes', label: 'poison-message', env: { REPLY_TIMEOUT_MS: '5000' } });
}, 60_000);
afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

function command(overrides: Record<string, unknown>): string {
  const { imei, latitude, longitude, speed, ignition } = buildTrip();
  const now = new Date().toISOString();
  return JSON.stringify({ imei, gpsTime: now, latitude, longitude, speed, ignition, receivedAt: now, ...overrides });
}

test('poison messages among valid posts go to the dead-letter topic with their reasons, and the writer stores everything else', async () => {
  const headers = await authorization();
  const [writer] = stack.writers;
  const topic = `${stack.prefix}.trip-locations`;
  const poison = [
    { reason: /^not JSON/, value: '{"imei": 42' },
    { reason: /^empty message$/, value: null },
    { reason: /^invalid command: latitude: /, value: command({ latitude: 200 }) },
    { reason: /^refused by the database: /, value: command({ gpsTime: '0000-01-01T00:00:00.000Z' }) },
    { reason: /^not JSON/, value: `\u00ff${'x'.repeat(100_000)}` },
  ];

  const load = startLoad(stack.url, headers, 5);
  await eventually(() => load.answered().ok >= 50, 30_000, { what: 'the first 50 confirmations', intervalMs: 10 });
  // Keys spread the poison over the partitions, so that whichever valid commands share one with it are held up if it stalls.
  await produceRaw(
    topic,
    poison.map((message, index) => ({ key: `poison-${index}`, value: message.value })),
  );
  // The load runs on until the poison has landed on the dead-letter topic: valid posts follow it on its partitions.
  const dead = await readTopic(`${stack.prefix}.dead-letter`, poison.length, 20_000);
  await load.finish();
  const figures = await audit('poison messages among valid commands', load.posts);
  const deadLettered = await metricValue(writer!, 'fleet_writer_dead_lettered_total');
  printFigures('k', figures, { poisonMessages: poison.length, deadLettered });

  expect(figures.unavailable).toBe(0);
  expectPromiseKept(figures);
  expect(writer!.isRunning()).toBe(true);
  expect(dead).toHaveLength(poison.length);
  for (const [index, message] of poison.entries()) {
    const letter = dead.find((entry) => entry.key === `poison-${index}`);
    expect(letter?.headers['dead-letter-reason']).toMatch(message.reason);
    expect(letter?.headers['dead-letter-source']).toMatch(new RegExp(`^${topic.replace(/\./g, '\\.')}/\\d+/\\d+$`));
  }
  expect(deadLettered).toBe(poison.length);
  expect(problemsLogged([writer!])).not.toMatch(/retrying without committing offsets/);
}, 120_000);

test('a group command PostgreSQL refuses is dead-lettered and the group command behind it on the same partition is stored', async () => {
  const groupWriter = await spawnService('group-writer', stack.env);
  const topic = `${stack.prefix}.vehicle-groups`;
  const valid = `gen:${randomUUID()}`;
  // The same key puts both on one partition, the refused one first.
  await produceRaw(topic, [
    { key: 'poison-group', value: JSON.stringify({ commandId: 'nul\u0000byte', vehicleGroupName: 'Refused', vehicleIds: [1] }) },
    { key: 'poison-group', value: JSON.stringify({ commandId: valid, vehicleGroupName: 'Behind the poison', vehicleIds: [7, 8] }) },
  ]);

  await eventually(
    async () => ((await db().query('SELECT 1 FROM vehicle_groups WHERE command_id = $1', [valid])).rowCount ?? 0) === 1,
    20_000,
    { what: 'the group behind the poison to be stored', intervalMs: 200 },
  );
  // The topic also holds the first test's letters; whatever it holds after a few seconds is read.
  const letters = await readTopic(`${stack.prefix}.dead-letter`, Number.MAX_SAFE_INTEGER, 5000);
  const letter = letters.find((entry) => entry.key === 'poison-group');
  expect(letter?.headers['dead-letter-reason']).toMatch(/^refused by the database: /);
  const members = await db().query(
    'SELECT m.vehicle_id FROM vehicle_group_members m JOIN vehicle_groups g ON g.id = m.vehicle_group_id WHERE g.command_id = $1 ORDER BY 1',
    [valid],
  );
  expect(members.rows.map((row) => Number(row.vehicle_id))).toEqual([7, 8]);
  expect(groupWriter.isRunning()).toBe(true);
}, 60_000);
