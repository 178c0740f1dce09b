/** ingest queue: inbox rows → readings and latest vehicle state; and the recovery sweep. */
import { adapters } from '../providers/index.js';
import { listPendingInboxIds } from '../src/db/inbox.js';
import { enqueueInboxRows } from '../src/queue/enqueue-ingest.js';
import { runIngestJob } from '../src/ingest/ingest-job.js';
import { enqueueGraceMs } from '../src/queue/after-commit.js';
import type { JobHandlers } from '../src/queue/handlers.js';
import type { WorkerDeps } from './worker-deps.js';

export function ingestHandlers(deps: WorkerDeps): JobHandlers<'ingest'> {
  return {
    'ingest.recover': async () => {
      const pending = await listPendingInboxIds(deps.pool, new Date(deps.now().getTime() - enqueueGraceMs), 10_000);
      await enqueueInboxRows(deps.queues, pending);
      if (pending.length > 0) deps.log.info({ rows: pending.length }, 're-enqueued unprocessed inbox rows');
      return { requeued: pending.length };
    },
    'ingest.process': ({ inboxId }) => runIngestJob(deps, inboxId, adapters),
  };
}
