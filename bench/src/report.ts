// Presents a benchmark run: the table printed to the terminal and docs/performance.md, and the same figures
// as an SVG bar chart of ratios to hello-world.
import { CPU_PARTS, type CpuPerRequest } from './process-cpu';
import { CAPACITY_PARTS, PLANNED_UTILISATION, REPORT_INTERVAL_S, type CapacityModel } from './capacity';
import type { BenchReport } from './bench-types';

const round = (value: number, digits = 2) => Number(value.toFixed(digits));

const CPU_HEADINGS: Record<keyof CpuPerRequest, string> = {
  gateway: 'gateway (or baseline server)',
  'trip-writer': 'trip-writer',
  'group-writer': 'group-writer',
  'event-processor': 'event processor',
  broker: 'broker',
  postgres: 'PostgreSQL',
  loadGenerator: 'load generator',
  total: 'total',
};

/**
 * CPU per request of each process, µs, one row per scenario (and one per position for a batch); then,
 * for a scenario whose parts ran as several processes (the scale-out), each process on its own.
 */
export function cpuTable(report: BenchReport): string[] {
  const columns = [...CPU_PARTS, 'total'] as Array<keyof CpuPerRequest>;
  const row = (name: string, cpu: CpuPerRequest) =>
    `| ${name} | ${columns.map((part) => (cpu[part] === null ? 'n/a' : round(cpu[part], 1))).join(' | ')} |`;
  return [
    'CPU per request, µs',
    '',
    `| scenario | ${columns.map((part) => CPU_HEADINGS[part]).join(' | ')} |`,
    `|---|${columns.map(() => '---:').join('|')}|`,
    ...report.scenarios.flatMap((s) => [
      row(s.name, s.cpuMicrosPerRequest),
      ...(s.cpuMicrosPerPosition ? [row(`${s.name}, per position`, s.cpuMicrosPerPosition)] : []),
    ]),
    ...report.scenarios
      .filter((s) => s.cpuMicrosPerRequestByProcess)
      .flatMap((s) => [
        '',
        `CPU per request by process, µs, ${s.name}: ` +
          Object.entries(s.cpuMicrosPerRequestByProcess!)
            .map(([label, micros]) => `${label} ${micros === null ? 'n/a' : round(micros, 1)}`)
            .join(', '),
      ]),
  ];
}

const thousands = (value: number | null) => (value === null ? 'n/a' : Math.round(value).toLocaleString('en-US'));

/** Positions a second per core of each part, measured, and the plans extrapolated from them. */
export function capacityTable(capacity: CapacityModel): string[] {
  const plans = capacity.plans.map(
    (plan) =>
      `| ${thousands(plan.positionsPerSecond)} | ${thousands(plan.devices)} | ${plan.gateways} | ${plan.tripWriters} | ` +
      `${plan.eventProcessors} | ${plan.partitions} | ` +
      `${plan.brokerCores} | ${plan.postgresCores} | ${plan.storageGiBPerDay === null ? 'n/a' : round(plan.storageGiBPerDay, 1)} |`,
  );
  return [
    'Capacity: positions stored per second per core of each part (measured: 1 s of CPU over the µs per position above)',
    '',
    `| posted | ${CAPACITY_PARTS.map((part) => (part === 'gateway' ? 'gateway' : CPU_HEADINGS[part])).join(' | ')} |`,
    `|---|${CAPACITY_PARTS.map(() => '---:').join('|')}|`,
    `| one position a request | ${CAPACITY_PARTS.map((part) => thousands(capacity.singlePosts[part])).join(' | ')} |`,
    `| ${capacity.batchPositions} positions a request | ${CAPACITY_PARTS.map((part) => thousands(capacity.batches[part])).join(' | ')} |`,
    ...(capacity.replicated
      ? [
          `| one position a request, three Kafka nodes | ${CAPACITY_PARTS.map((part) => thousands(capacity.replicated![part])).join(' | ')} |`,
        ]
      : []),
    '',
    `Extrapolated for devices each posting one position every ${REPORT_INTERVAL_S} s, parts planned ${PLANNED_UTILISATION * 100}% busy, ` +
      `from the costs of "${capacity.plannedFrom ?? 'trip create, JSON'}"` +
      (capacity.brokerPlannedFrom
        ? `, the broker's from "${capacity.brokerPlannedFrom}"`
        : ' on the single broker (three nodes: `npm run bench:replication`, fitted over paced rates)'),
    '',
    '| positions/s | devices | gateways | trip-writers | event processors | partitions | broker cores | PostgreSQL cores | storage GiB/day |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...plans,
  ];
}

/** How the run held each scale-out instance's load, as the machine line tells it; runs before it held none. */
function scaleOutLoad({ scaleOutRate, scaleOutConnections }: BenchReport['settings']): string {
  if (scaleOutRate !== undefined) return ` (scale-out: ${scaleOutRate} creates/s per gateway)`;
  return scaleOutConnections === undefined ? '' : ` (scale-out: ${scaleOutConnections} per gateway)`;
}

export function markdownTable(report: BenchReport): string {
  const runs = report.helloWorldRuns.length;
  const rows = report.scenarios.map((s, index) => {
    const beside = index === 0 ? `mean of ${runs} runs` : `${Math.round(s.baseline.requestsPerSecond)}`;
    return `| ${s.name} | ${Math.round(s.requestsPerSecond)} | ${beside} | ${round(s.ratio)} | ${s.p50Ms} | ${s.p99Ms} | ${s.errors} |`;
  });
  const rss = Object.entries(report.peakRssMiB)
    .map(([name, mib]) => `${name} ${mib ?? 'n/a'} MiB`)
    .join(', ');
  const positions = report.scenarios
    .filter((s) => s.positionsPerSecond !== undefined)
    .map((s) => `Positions stored per second, ${s.name}: ${Math.round(s.positionsPerSecond!)}`);
  const streamed = report.scenarios
    .filter((s) => s.streamDelay)
    .map(
      (s) =>
        `Live stream events, ${s.name}: ${s.streamDelay!.events}, from the post's 200 to its event p50 ${s.streamDelay!.p50Ms} ms, ` +
        `p99 ${s.streamDelay!.p99Ms} ms`,
    );
  const split = report.scenarios
    .filter((s) => s.requestsByGateway)
    .map(
      (s) =>
        `Requests answered by each gateway, ${s.name}: ` +
        Object.entries(s.requestsByGateway!)
          .map(([label, count]) => `${label} ${count}`)
          .join(', '),
    );
  const volume = report.volume
    ? [
        '',
        `Volume: ${report.volume.positions} positions of ${report.volume.devices} devices over ${report.volume.days} days, ` +
          `generated in the database in ${round(report.volume.generationSeconds, 1)} s; ` +
          `trip_locations ${report.volume.tripLocationsPartitioned ? 'partitioned by day' : 'one table'}` +
          (report.volume.bytesPerPosition
            ? `, ${Math.round(report.volume.bytesPerPosition)} bytes a position on disk with its indexes`
            : ''),
      ]
    : [];
  const before = report.tripCreateBefore
    ? `Trip creates compared with the run of ${report.tripCreateBefore.startedAt}, the last before partitioning: ratio ${round(report.tripCreateBefore.ratio, 3)} to hello-world`
    : 'No earlier run before partitioning at these connections to compare trip creates with';
  const verdict = (met: boolean | null) => (met === null ? 'reported' : met ? 'met' : 'MISSED');
  const targets = report.targets.map((t) => `| ${t.what} | ${round(t.value, 3)} | ${t.target} | ${verdict(t.met)} |`);
  return [
    `Machine: ${report.machine.cpus} × ${report.machine.cpuModel}, ${report.machine.memoryGiB} GiB, Node ${report.machine.node}; ` +
      `${report.settings.connections} connections` +
      scaleOutLoad(report.settings) +
      `, ${report.settings.durationSeconds} s per scenario after ${report.settings.warmupSeconds} s warm-up; ${report.startedAt}`,
    `Broker: ${report.broker}`,
    ...volume,
    '',
    '| scenario | req/s | hello-world around it, req/s | ratio to it | p50 ms | p99 ms | errors |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    ...cpuTable(report),
    '',
    `Hello-world runs, req/s, in order: ${report.helloWorldRuns.map((run) => Math.round(run)).join(', ')}`,
    ...(positions.length ? ['', ...positions] : []),
    ...(split.length ? ['', ...split] : []),
    ...(streamed.length ? ['', ...streamed] : []),
    '',
    `Peak RSS: ${rss}`,
    '',
    '| target | value | goal | |',
    '|---|---:|---|---|',
    ...targets,
    '',
    before,
    ...(report.capacity ? ['', ...capacityTable(report.capacity)] : []),
  ].join('\n');
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function svgChart(report: BenchReport): string {
  const barHeight = 26;
  const gap = 10;
  const left = 230;
  const width = 760;
  const plot = width - left - 120;
  const top = 50;
  const maxRatio = Math.max(1, ...report.scenarios.map((s) => s.ratio));
  const height = top + report.scenarios.length * (barHeight + gap) + 40;
  const x = (ratio: number) => left + (ratio / maxRatio) * plot;
  const bars = report.scenarios.map((s, i) => {
    const y = top + i * (barHeight + gap);
    const w = Math.max(1, x(s.ratio) - left);
    return [
      `<text x="${left - 8}" y="${y + barHeight / 2 + 5}" text-anchor="end">${escapeXml(s.name)}</text>`,
      `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" fill="${i < 2 ? '#9aa5b1' : '#2f80ed'}"/>`,
      `<text x="${(left + w + 6).toFixed(1)}" y="${y + barHeight / 2 + 5}">${round(s.ratio)}× · ${Math.round(s.requestsPerSecond)} req/s · p99 ${s.p99Ms} ms</text>`,
    ].join('');
  });
  const guides = [0.5, 0.8, 1]
    .filter((ratio) => ratio <= maxRatio)
    .map(
      (ratio) =>
        `<line x1="${x(ratio).toFixed(1)}" y1="${top - 8}" x2="${x(ratio).toFixed(1)}" y2="${height - 30}" stroke="#e0527a" stroke-dasharray="4 3"/>` +
        `<text x="${x(ratio).toFixed(1)}" y="${height - 14}" text-anchor="middle" fill="#e0527a">${ratio}×</text>`,
    );
  const title = `Requests/s as a ratio to hello-world (${report.machine.cpus} CPUs, ${escapeXml(report.machine.cpuModel)}, ${report.settings.connections} connections)`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width + 140}" height="${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="12" y="24" font-size="15" font-weight="bold">${title}</text>`,
    ...guides,
    ...bars,
    '</svg>',
  ].join('\n');
}
