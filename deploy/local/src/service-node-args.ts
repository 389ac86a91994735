// The Node.js flags each service runs with, on this machine (the launcher, the tests' processes) and in
// its deployments (each Kubernetes and compose service's NODE_OPTIONS, which a deploy test holds to this
// table). A 16 MB young generation lets a request's short-lived objects die young. An old-generation
// ceiling of three quarters of the container's memory limit makes V8 collect large garbage, such as
// request bodies of up to BODY_LIMIT, as it goes: left to size its heap for the machine, V8 let a burst
// of 1 MB posts take the gateway past 300 MiB, most of it bodies already answered.
export type ServiceName = 'gateway' | 'trip-writer' | 'group-writer' | 'event-processor' | 'teltonika';

/** V8's old-generation ceiling per service: 3/4 of its Kubernetes memory limit (512 and 384 MiB). */
export const serviceHeapMiB: Record<ServiceName, number> = {
  gateway: 384,
  'trip-writer': 288,
  'group-writer': 288,
  'event-processor': 288,
  teltonika: 288,
};

export function serviceNodeArgs(service: ServiceName): string[] {
  return ['--max-semi-space-size=16', `--max-old-space-size=${serviceHeapMiB[service]}`];
}

/** Each service's entry point, from the repository root: the Teltonika listener is the gateway package's. */
export const serviceEntry: Record<ServiceName, string> = {
  gateway: 'services/gateway/dist/main.js',
  'trip-writer': 'services/trip-writer/dist/main.js',
  'group-writer': 'services/group-writer/dist/main.js',
  'event-processor': 'services/event-processor/dist/main.js',
  teltonika: 'services/teltonika/dist/main.js',
};
