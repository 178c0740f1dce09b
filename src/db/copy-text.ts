/**
 * COPY's text format (https://www.postgresql.org/docs/current/sql-copy.html, "Text Format"):
 * tab-separated fields, one row per line, `\N` for NULL, and backslash, tab and line breaks
 * escaped inside a field. COPY parses rows with each column's input function directly, about half
 * the Postgres time of an INSERT fed from arrays or a JSON document (docs/performance.md).
 */
import copyStreams from 'pg-copy-streams';
import type { PoolClient } from './pool.js';

const copySpecial = /[\\\t\n\r]/;

/** One field of COPY text: backslash, tab, newline and carriage return escaped. */
export function copyField(text: string): string {
  return copySpecial.test(text)
    ? text.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'))
    : text;
}

/**
 * Runs `COPY … FROM STDIN` with `text` as its data; resolves null once Postgres has taken every
 * row, or Postgres' error when it refused the COPY (the transaction is then aborted: the caller
 * rolls back, and can say why).
 *
 * The stream is ended, never destroyed: it settles on Postgres' ReadyForQuery ('finish') or its
 * ErrorResponse ('error'), and node-postgres sends the next statement once Postgres is ready
 * again. Destroying it, as `stream.pipeline` does on an error, sends a CopyFail for a COPY the
 * server has already ended and leaves pg-copy-streams' destroy callback pending for good
 * (docs/ingestion.md, "Readings by COPY").
 */
export function copyFromText(client: PoolClient, statement: string, text: string): Promise<Error | null> {
  return new Promise<Error | null>((resolve) => {
    const stream = client.query(copyStreams.from(statement));
    stream.once('finish', () => resolve(null));
    // Kept for the stream's life: a write still waiting for the socket to drain when the COPY
    // failed ends in a second error once it resumes, which must not go unheard.
    stream.on('error', (error) => resolve(error));
    stream.end(text);
  });
}
