/**
 * The provider adapter contract. An adapter is pure: `normalize` turns one raw payload into
 * normalized samples and events and never throws for bad input; `verifyPush` checks a push's
 * signature with constant-time comparisons. HTTP pulls live in `<name>.client.ts`.
 */
import type { ProviderEvent, Sample } from '../src/domain/sample.js';

export const providerIds = ['samsara', 'geotab', 'motive', 'smartcar', 'traccar', 'generic', 'simulator'] as const;
export type ProviderId = (typeof providerIds)[number];

/** A push as received: the exact body bytes, lower-cased headers, and the parsed query string. */
export interface PushRequest {
  method: string;
  headers: Record<string, string | undefined>;
  query: Record<string, string>;
  rawBody: Buffer;
}

export type VerifyResult = { ok: true } | { ok: false; reason: 'missing_signature' | 'bad_signature' | 'stale_timestamp' };

/**
 * A stored raw payload handed to `normalize`: the body text as received (JSON text, a form body
 * or, for an OsmAnd GET, the query string) and its content type.
 */
export interface RawPayload {
  contentType: string | null;
  body: string;
}

export type NormalizeResult =
  | {
      ok: true;
      samples: Sample[];
      events: ProviderEvent[];
      /** Entries that could not be used (bad value, missing vehicle id, unknown time), with why. */
      skipped: Array<{ reason: string }>;
      /** Pull cursor carried by the payload (Samsara endCursor, Geotab toVersion), if any. */
      nextCursor?: string | null;
    }
  | { ok: false; reason: string };

/**
 * How the provider supports `POST /vehicles/{id}/refresh`:
 * supported (a pull of one vehicle exists), unsupported (400 REFRESH_NOT_SUPPORTED: the provider
 * cannot be asked, e.g. Traccar devices push only), not_implemented (501).
 */
export type RefreshSupport = 'supported' | 'unsupported' | 'not_implemented';

export interface ProviderAdapter {
  id: ProviderId;
  /** null when the provider never pushes to us (Geotab is pull-only). */
  verifyPush: ((request: PushRequest, secret: string, now: Date) => VerifyResult) | null;
  normalize(raw: RawPayload, receivedAt: Date): NormalizeResult;
  refresh: RefreshSupport;
}

/** A connection's provider settings (decrypted `config` of the provider connection; DESIGN §6). */
export interface ProviderConfig {
  /** Push signature secret (Samsara base64 secret, Motive shared secret, generic secret; Smartcar application management token). */
  webhook_secret?: string;
  /** API base URL for pulls, e.g. https://api.samsara.com; tests point it at a fake server on 127.0.0.1. */
  base_url?: string;
  api_token?: string;
  /** Geotab only. */
  database?: string;
  username?: string;
  password?: string;
}

/** One page fetched from a provider: stored in the inbox as-is and normalized by the adapter. */
export interface PulledPage {
  body: string;
  contentType: string;
  /** Where the next pull continues; persisted only after this page is committed. null = start over next time. */
  nextCursor: string | null;
  /** True when the provider said more pages are ready now. */
  hasMore: boolean;
}

export type PullOutcome =
  | { ok: true; page: PulledPage }
  | { ok: false; kind: 'rate_limited'; retryAfterMs: number }
  | { ok: false; kind: 'failed'; message: string };

export type Fetch = typeof fetch;

/** The small HTTP client of a provider that can be pulled (`<name>.client.ts`). */
export interface PullClient {
  /** The next page of the provider's change feed after `cursor` (null: from the provider's default start). */
  pullFeed?(config: ProviderConfig, cursor: string | null, fetchImpl: Fetch): Promise<PullOutcome>;
  /** The latest data of one vehicle, now (POST /vehicles/{id}/refresh). */
  pullVehicle?(config: ProviderConfig, providerVehicleId: string, fetchImpl: Fetch): Promise<PullOutcome>;
}
