/**
 * What the logs redact besides the credentials src/log.ts names itself: each push adapter's
 * signature headers, declared by the adapter, so a new provider needs no edit of the logger.
 */
import { adapters } from '../providers/index.js';

/** The request headers that carry a push signature or device token, of every provider. */
export const providerSecretHeaders: readonly string[] = Object.values(adapters).flatMap(
  (adapter) => adapter.push?.signatureHeaders ?? [],
);
