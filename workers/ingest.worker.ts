/** ingest queue: drains of pending inbox rows → readings and latest vehicle state; and the recovery sweep. */
import { adapters } from '../providers/index.js';
import { runIngestDrain } from '../src/ingest/ingest-job.js';
import { recoverInbox } from '../src/ingest/recover.js';
import type { JobHandlers } from '../src/queue/handlers.js';
import type { WorkerDeps } from './worker-deps.js';

export function ingestHandlers(deps: WorkerDeps): JobHandlers<'ingest'> {
  return {
    'ingest.recover': () => recoverInbox(deps),
    'ingest.drain': ({ shard }) => runIngestDrain(deps, shard, adapters),
  };
}
