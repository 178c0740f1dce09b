import type { Config } from '../src/config.js';
import type { Pool } from '../src/db/pool.js';
import type { Logger } from '../src/log.js';
import type { Metrics } from '../src/metrics.js';
import type { Queues } from '../src/queue/queues.js';

/** What every worker shell may use; nothing else reaches a processor. */
export interface WorkerDeps {
  config: Config;
  pool: Pool;
  log: Logger;
  metrics: Metrics;
  queues: Queues;
  now: () => Date;
}
