// How the gateway logs the 503s it answers while a dependency is away. During a broker outage every
// request is a 503, and a warn line each would be hundreds a second: instead one line when a run of
// 503s with a code starts, a count every REPORT_INTERVAL_MS while it lasts, and one line when no such
// 503 has been answered for QUIET_MS.
import type { Logger } from '@fleet/shared/logger';

export const REPORT_INTERVAL_MS = 10_000;
export const QUIET_MS = 5000;

export interface UnavailableLog {
  /** A request answered 503 with this code. */
  answered(code: string, message: string, context: Record<string, unknown>): void;
}

interface Run {
  startedAt: number;
  total: number;
  sinceReport: number;
  report: NodeJS.Timeout;
  quiet: NodeJS.Timeout;
}

export function createUnavailableLog(logger: Logger, now: () => number = Date.now): UnavailableLog {
  const runs = new Map<string, Run>();

  const end = (code: string) => {
    const run = runs.get(code)!;
    runs.delete(code);
    clearInterval(run.report);
    logger.info(
      { code, answered: run.total, forSeconds: (now() - run.startedAt) / 1000 },
      `503 ${code}: no longer answered; the run of them is over`,
    );
  };

  return {
    answered(code, message, context) {
      const run = runs.get(code);
      if (run) {
        run.total += 1;
        run.sinceReport += 1;
        run.quiet.refresh();
        return;
      }
      logger.warn({ code, ...context }, `${message} (answering 503 ${code}; counted until it stops)`);
      const started: Run = {
        startedAt: now(),
        total: 1,
        sinceReport: 1,
        report: setInterval(() => {
          if (started.sinceReport === 0) return;
          logger.warn({ code, answered: started.sinceReport, intervalSeconds: REPORT_INTERVAL_MS / 1000 }, `503 ${code}: still answered`);
          started.sinceReport = 0;
        }, REPORT_INTERVAL_MS),
        quiet: setTimeout(() => end(code), QUIET_MS),
      };
      started.report.unref();
      started.quiet.unref();
      runs.set(code, started);
    },
  };
}
