// The test kit's one stack starter: a test says how its stack runs, and gets the handle of that kind.
// - 'in-process': the gateway and writers in the test's own process, on a topic prefix of their own;
// - 'processes': each service a process of its own, which a fault test may kill, freeze or restart;
// - 'launcher': `npm start`'s launcher itself, as a developer runs it, with the environment given;
// - 'gateway': the gateway alone in the test's process, its log lines kept (the category reads).
import { startCategoryGateway, type CategoryGateway } from '../categories/category-support';
import { startInProcessStack, type Stack, type StackOptions } from './harness';
import { startLauncher, type Launcher } from './launcher';
import { startProcessStack, type ProcessStack, type ProcessStackOptions } from './process-stack';

export type InProcessRequest = { mode: 'in-process'; label: string } & StackOptions;
export type ProcessesRequest = { mode: 'processes'; label: string } & ProcessStackOptions;
export interface LauncherRequest {
  mode: 'launcher';
  env: NodeJS.ProcessEnv;
}
export interface GatewayRequest {
  mode: 'gateway';
  env?: Record<string, string>;
  /** The gateway's log level: its lines are what these tests read. */
  level?: string;
}

export function startStack(request: InProcessRequest): Promise<Stack>;
export function startStack(request: ProcessesRequest): Promise<ProcessStack>;
export function startStack(request: LauncherRequest): Promise<Launcher>;
export function startStack(request: GatewayRequest): Promise<CategoryGateway>;
export function startStack(
  request: InProcessRequest | ProcessesRequest | LauncherRequest | GatewayRequest,
): Promise<Stack | ProcessStack | Launcher | CategoryGateway> {
  switch (request.mode) {
    case 'in-process': {
      const { mode: _mode, label, ...options } = request;
      return startInProcessStack(label, options);
    }
    case 'processes': {
      const { mode: _mode, label, ...options } = request;
      return startProcessStack(label, options);
    }
    case 'launcher':
      return startLauncher(request.env);
    case 'gateway':
      return startCategoryGateway(request.env, request.level);
  }
}
