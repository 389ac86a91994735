// The alert rules as promtool sees them: deploy/observability/alerts.yml passes `promtool check rules`,
// its unit tests (alerts.test.yml) pass `promtool test rules` and cover every alert both firing and not
// firing, the compose Prometheus configuration passes `promtool check config`, and every runbook_url
// leads to a section of docs/operations.md.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { observabilityDir, readRules, requireTool, rulesFile } from '../support/prometheus';

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '..', '..');

async function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd: observabilityDir });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

beforeAll(() => requireTool('promtool'));

const rules = readRules();

test('promtool check rules accepts the rules file', async () => {
  const result = await promtool('check', 'rules', rulesFile);
  expect(result).toEqual({ code: 0, output: expect.stringContaining(`SUCCESS: ${rules.length} rules found`) });
});

test('promtool test rules passes the unit tests of every alert', async () => {
  const result = await promtool('test', 'rules', 'alerts.test.yml');
  expect(result).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
});

test('promtool test rules fails when a threshold is changed, so the unit tests hold the rules to their figures', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-rules-'));
  try {
    const changed = readFileSync(rulesFile, 'utf8').replace('> 0.05', '> 0.5');
    expect(changed).not.toBe(readFileSync(rulesFile, 'utf8'));
    writeFileSync(path.join(dir, 'alerts.yml'), changed);
    writeFileSync(path.join(dir, 'alerts.test.yml'), readFileSync(path.join(observabilityDir, 'alerts.test.yml')));
    const result = await promtool('test', 'rules', path.join(dir, 'alerts.test.yml'));
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('FleetGateway5xx');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the unit tests cover every alert with a case that fires and one that does not', () => {
  interface UnitTests {
    tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }> }>;
  }
  const unitTests = parse(readFileSync(path.join(observabilityDir, 'alerts.test.yml'), 'utf8')) as UnitTests;
  const checks = unitTests.tests.flatMap((unit) => unit.alert_rule_test ?? []);
  const coverage = rules.map((rule) => ({
    alert: rule.alert,
    fires: checks.some((check) => check.alertname === rule.alert && (check.exp_alerts ?? []).length > 0),
    staysQuiet: checks.some((check) => check.alertname === rule.alert && (check.exp_alerts ?? []).length === 0),
  }));
  expect(coverage).toEqual(rules.map((rule) => ({ alert: rule.alert, fires: true, staysQuiet: true })));
});

test('every alert has a severity, a summary and a runbook_url to its own section of docs/operations.md', () => {
  const operations = readFileSync(path.join(repoRoot, 'docs', 'operations.md'), 'utf8');
  // GitHub's anchors: lower case, punctuation dropped, spaces as hyphens.
  const anchors = new Set(
    [...operations.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) =>
      heading!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
  for (const rule of rules) {
    expect({ alert: rule.alert, severity: rule.labels?.severity, summary: typeof rule.annotations?.summary }).toEqual({
      alert: rule.alert,
      severity: expect.stringMatching(/^(critical|warning)$/),
      summary: 'string',
    });
    const link = rule.annotations?.runbook_url ?? '';
    expect({ alert: rule.alert, link }).toEqual({ alert: rule.alert, link: `docs/operations.md#alert-${rule.alert.toLowerCase()}` });
    expect({ alert: rule.alert, sectionExists: anchors.has(link.split('#')[1]!) }).toEqual({ alert: rule.alert, sectionExists: true });
  }
});

test('promtool check config accepts the compose Prometheus configuration with the rules file it mounts', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-prometheus-config-'));
  try {
    const config = parse(readFileSync(path.join(observabilityDir, 'prometheus.yml'), 'utf8')) as { rule_files: string[] };
    config.rule_files = [rulesFile];
    writeFileSync(path.join(dir, 'prometheus.yml'), stringify(config));
    const result = await promtool('check', 'config', path.join(dir, 'prometheus.yml'));
    expect(result).toEqual({ code: 0, output: expect.stringContaining(`SUCCESS: ${rules.length} rules found`) });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
