-- Developer console (DESIGN §12): one-time messages from a state-changing POST to the page it
-- redirects to (POST/redirect/GET). A new API key or signing secret travels this way, so it is
-- sealed with SECRETS_KEY like other secrets at rest, read by id and session together (another
-- session cannot read it), and deleted by the read that shows it. Ending the session drops them.

CREATE TABLE console_flashes (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id         uuid NOT NULL REFERENCES console_sessions (id) ON DELETE CASCADE,
  -- The page that shows it ('api-keys', 'webhooks'); another page does not take it.
  page               text NOT NULL,
  -- AES-256-GCM of the message's JSON (src/security/secrets.ts).
  payload_ciphertext bytea NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX console_flashes_session ON console_flashes (session_id);
