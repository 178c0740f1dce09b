/**
 * Process entry point: `node dist/server/main.js start|api|worker [queue...]|migrate`.
 * See server/service.ts for what each mode runs.
 */
import { ConfigError, loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { prepareDatabase } from '../src/db/migrate.js';
import { exitWithLauncher, relaunchUnderHeapCap, startedUnderHeapCap } from './heap-cap.js';
import { providerSecretHeaders } from './log-redaction.js';
import type { ServiceMode } from './service.js';

const [command = 'start', ...args] = process.argv.slice(2);
if (!['start', 'api', 'worker', 'migrate'].includes(command)) {
  console.error(`unknown command "${command}": use start, api, worker [queue...] or migrate`);
  process.exit(2);
}

try {
  const config = loadConfig();
  if (command === 'worker' && config.workerHeapMiB > 0 && !startedUnderHeapCap()) {
    relaunchUnderHeapCap(config.workerHeapMiB);
  } else {
    exitWithLauncher();
    const log = createLogger(config.logLevel, 'fleet', undefined, providerSecretHeaders);
    if (config.secretsKeyGenerated) log.warn('SECRETS_KEY is not set: using the development key in .data/secrets.key');
    if (command === 'migrate') {
      await prepareDatabase(config.databaseUrl, log);
      process.exit(0);
    }
    // Loaded here, so a launcher (server/heap-cap.ts) stays small.
    const { closeOnSignals, startService } = await import('./service.js');
    closeOnSignals(await startService(config, log, command as ServiceMode, args), log);
  }
} catch (error) {
  // Bad configuration is one clear line; anything else keeps its message but never a stack dump.
  console.error(error instanceof ConfigError ? error.message : `start-up failed: ${(error as Error).message}`);
  process.exit(1);
}
