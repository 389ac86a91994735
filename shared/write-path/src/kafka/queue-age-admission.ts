// Admission by queue age: once the write path is backed up, new commands are refused with a retry-safe
// 503 at once instead of joining a queue whose wait would outlast the client's patience. Backed up means
// a request has waited longer than the limit and no request has been answered within it for a second:
// one stuck partition (its leader frozen) does not shed the others' writes while they are answered
// promptly, and a writer that has fallen behind sheds new ones before replies reach REPLY_TIMEOUT_MS.

/** How long prompt replies may be missing, a request waiting past the limit, before shedding starts. */
export const PROMPT_WINDOW_MS = 1000;
/**
 * While shedding, one request this often is let through: its reply, if prompt, ends the shedding, so the
 * gate reopens once the backlog clears even when nothing older is left to be answered.
 */
export const PROBE_INTERVAL_MS = 100;

export class QueueAgeAdmission {
  private lastPromptReplyAt: number;
  private lastProbeAt = Number.NEGATIVE_INFINITY;

  /** maxAgeMs 0 admits every request. */
  constructor(
    private readonly maxAgeMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.lastPromptReplyAt = now();
  }

  /** Observes a reply that came `waitedMs` after its request. */
  replied(waitedMs: number): void {
    if (waitedMs <= this.maxAgeMs) this.lastPromptReplyAt = this.now();
  }

  /**
   * Whether a new request may be published, given when the oldest request still waiting began
   * (performance.now(); undefined when none waits). A request let through as a probe counts as one.
   */
  admits(oldestStartedAt: number | undefined): boolean {
    if (this.maxAgeMs === 0 || oldestStartedAt === undefined) return true;
    const now = this.now();
    if (now - oldestStartedAt <= this.maxAgeMs || now - this.lastPromptReplyAt <= PROMPT_WINDOW_MS) return true;
    if (now - this.lastProbeAt < PROBE_INTERVAL_MS) return false;
    this.lastProbeAt = now;
    return true;
  }
}
