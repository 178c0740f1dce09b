/**
 * The heap cap of worker processes (`WORKER_HEAP_MIB`). V8 sizes its heap once, as the process
 * starts: a flag set later (v8.setFlagsFromString) does not move the limit. So a worker started
 * without the cap starts itself again under `--max-old-space-size` and stays as a thin launcher
 * that relays SIGINT and SIGTERM and exits as the capped process does. An IPC channel ties the
 * two: a launcher killed outright (SIGKILL) closes it, and the capped process exits at once
 * rather than run on unowned.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

const capFlag = '--max-old-space-size';

/** Whether this process was started with a heap cap on its command line (by the launcher or by hand). */
export function startedUnderHeapCap(): boolean {
  return process.execArgv.some((arg) => arg.startsWith(`${capFlag}=`));
}

/** Runs this process's own command again under a cap of `capMiB`; this process exits when that one does. */
export function relaunchUnderHeapCap(capMiB: number): void {
  // In a session of its own, so a terminal's Ctrl-C reaches it once, relayed, not a second time
  // straight from the terminal (which would read as "second signal: exit now").
  const child = spawn(process.execPath, [...process.execArgv, `${capFlag}=${capMiB}`, ...process.argv.slice(1)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    console.error(`start-up failed: ${error.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
}

/** In a process the launcher started: exits when the launcher is gone. */
export function exitWithLauncher(): void {
  if (!process.connected) return;
  process.on('disconnect', () => process.exit(1));
  // The channel alone must not keep the process running once everything else is closed.
  process.channel?.unref();
}
