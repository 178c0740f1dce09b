/** Purges run as batches: no statement holds many row locks for long, and each commits on its own. */
export const deleteBatchRows = 5_000;

/** Runs `deleteBatch(limit)` until a batch comes back short; answers the rows deleted in all. */
export async function deleteInBatches(deleteBatch: (limit: number) => Promise<number>): Promise<number> {
  let deleted = 0;
  for (;;) {
    const batch = await deleteBatch(deleteBatchRows);
    deleted += batch;
    if (batch < deleteBatchRows) return deleted;
  }
}
