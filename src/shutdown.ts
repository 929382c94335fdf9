/**
 * Runs `stop` once on the first SIGINT or SIGTERM, then exits. A second signal while stopping
 * exits at once.
 */
export function onShutdownSignal(stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      console.error(`${signal} received again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`Shutdown failed: ${(error as Error)?.message ?? error}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
