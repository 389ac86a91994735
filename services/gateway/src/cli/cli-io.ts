// How the operator CLIs meet the process: their logic takes an environment and two line writers (so
// tests run it in-process), and runs as a program only through runAsProgram.
import { parseArgs } from 'node:util';

export interface CliIo {
  env: NodeJS.ProcessEnv;
  out(line: string): void;
  err(line: string): void;
}

/** Runs a CLI against the real process: its exit code becomes the process's, an error its one line. */
export function runAsProgram(cli: (args: readonly string[], io: CliIo) => Promise<number>): void {
  cli(process.argv.slice(2), {
    env: process.env,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: Error) => {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 1;
    },
  );
}

/** The words of a command line that takes no options; undefined when it holds one (e.g. `--force`). */
export function positionals(args: readonly string[]): string[] | undefined {
  try {
    return parseArgs({ args: [...args], options: {}, allowPositionals: true, strict: true }).positionals;
  } catch {
    return undefined;
  }
}
