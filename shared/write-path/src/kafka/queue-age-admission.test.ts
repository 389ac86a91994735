import { PROBE_INTERVAL_MS, PROMPT_WINDOW_MS, QueueAgeAdmission } from './queue-age-admission';

function gate(maxAgeMs: number) {
  let now = 10_000;
  const admission = new QueueAgeAdmission(maxAgeMs, () => now);
  return {
    admission,
    advance: (ms: number) => (now += ms),
    at: () => now,
  };
}

test('admits while nothing waits, and while the oldest request is younger than the limit', () => {
  const { admission, advance, at } = gate(500);
  expect(admission.admits(undefined)).toBe(true);
  const started = at();
  advance(400);
  expect(admission.admits(started)).toBe(true);
});

test('sheds once the oldest waits past the limit and no reply came within it for a second, letting one probe through every interval', () => {
  const { admission, advance, at } = gate(500);
  const started = at();
  advance(PROMPT_WINDOW_MS + 1);
  expect(admission.admits(started)).toBe(true); // the first probe
  expect(admission.admits(started)).toBe(false);
  advance(PROBE_INTERVAL_MS - 1);
  expect(admission.admits(started)).toBe(false);
  advance(1);
  expect(admission.admits(started)).toBe(true);
  expect(admission.admits(started)).toBe(false);
});

test('a prompt reply within the last second keeps admitting, though one request is stuck: one frozen partition sheds no one', () => {
  const { admission, advance, at } = gate(500);
  const stuck = at();
  advance(5000);
  admission.replied(20);
  for (let request = 0; request < 10; request += 1) expect(admission.admits(stuck)).toBe(true);
  advance(PROMPT_WINDOW_MS + 1);
  expect(admission.admits(stuck)).toBe(true); // a probe: the prompt reply is over a second old
  expect(admission.admits(stuck)).toBe(false);
});

test('slow replies do not count as prompt', () => {
  const { admission, advance, at } = gate(500);
  const started = at();
  advance(2000);
  admission.replied(501);
  admission.admits(started); // the probe
  expect(admission.admits(started)).toBe(false);
});

test('0 admits everything', () => {
  const { admission, advance, at } = gate(0);
  const started = at();
  advance(60_000);
  for (let request = 0; request < 5; request += 1) expect(admission.admits(started)).toBe(true);
});
