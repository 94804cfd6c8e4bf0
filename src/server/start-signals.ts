/*
 * Node installs no handler for SIGTERM: as PID 1 of a container the kernel then ignores the signal
 * (the container is killed after the stop timeout), elsewhere the process dies by it (exit 143).
 * From the entry point's first line until the server drains on its own (graceful-shutdown.ts),
 * SIGTERM and SIGINT exit 0 at once: nothing is served yet, and what may be under way is safe to
 * drop. A wait for the migration lock ends with the connection; a migration runs in one
 * transaction, which PostgreSQL rolls back when its connection goes; creating the application
 * holds nothing that outlives the process.
 */
const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

function exitAtOnce(signal: NodeJS.Signals): void {
  // One JSON line like the rest of the log; written synchronously, since exit follows.
  process.stdout.write(
    JSON.stringify({
      level: 'info',
      time: new Date().toISOString(),
      msg: `${signal} before serving: exiting`,
    }) + '\n',
  );
  process.exit(0);
}

/** Once per process: the entry point installs it, then serve.ts (started by it, or alone by `npm run start:prod`) again. */
export function exitOnSignalUntilServing(): void {
  for (const signal of SIGNALS) {
    if (!process.listeners(signal).includes(exitAtOnce)) process.on(signal, exitAtOnce);
  }
}

/** Called by enableGracefulShutdown, in the same tick as it installs its own handlers. */
export function handOverSignals(): void {
  for (const signal of SIGNALS) process.off(signal, exitAtOnce);
}
