import { stdoutLog } from '../logging/stdout-log';

/*
 * Node installs no handler for SIGTERM: as PID 1 of a container the kernel then ignores the signal
 * (the container is killed after the stop timeout), elsewhere the process dies by it (exit 143).
 * From the entry point's first line until the server drains on its own (graceful-shutdown.ts),
 * SIGTERM and SIGINT exit 0 at once: nothing is served yet, and what may be under way is safe to
 * drop. A wait for the migration lock ends with the connection; a migration runs in one
 * transaction, which PostgreSQL rolls back when its connection goes; creating the application
 * holds nothing that outlives the process.
 *
 * One listener per signal for the whole life of the process, whose behaviour changes, rather than
 * one listener removed and another added: a signal that arrives while JavaScript runs waits in
 * libuv for the next turn of the event loop, addressed to the listener installed at that moment,
 * and is dropped if that listener is gone by then: a SIGTERM that came during the server's start
 * would be lost, and the server would serve on.
 */
const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

type SignalHandler = (signal: NodeJS.Signals) => void;

let drain: SignalHandler | undefined;

function exitAtOnce(signal: NodeJS.Signals): void {
  // One JSON line like the rest of the log, after the lines before it (exit writes them all).
  stdoutLog().write(
    JSON.stringify({
      level: 'info',
      time: new Date().toISOString(),
      msg: `${signal} before serving: exiting`,
    }) + '\n',
  );
  process.exit(0);
}

function onSignal(signal: NodeJS.Signals): void {
  if (drain) drain(signal);
  else exitAtOnce(signal);
}

/** Once per process: the entry point installs it, then serve.ts (started by it, or alone by `npm run start:prod`) again. */
export function exitOnSignalUntilServing(): void {
  for (const signal of SIGNALS) {
    if (!process.listeners(signal).includes(onSignal)) process.on(signal, onSignal);
  }
}

/**
 * Called by enableGracefulShutdown once the server listens: from then on the signals go to
 * `handler` (the drain), a signal already received but not yet handled included.
 */
export function handOverSignals(handler: SignalHandler): void {
  exitOnSignalUntilServing();
  drain = handler;
}
