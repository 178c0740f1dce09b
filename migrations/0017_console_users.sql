-- Developer console (DESIGN §12): company users created by the operator (§5) and their sign-in
-- sessions. Passwords are scrypt hashes; a session row holds only the SHA-256 of its token, so a
-- leaked table cannot sign anyone in.

CREATE TABLE console_users (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id    uuid NOT NULL REFERENCES companies (id),
  -- Stored lower-cased: sign-in matches an address however it was typed.
  email         text NOT NULL,
  name          text NOT NULL,
  -- scrypt$<N>$<r>$<p>$<salt base64>$<key base64> (src/security/passwords.ts).
  password_hash text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  -- Set by DELETE /admin/v1/users/:id; a disabled user cannot sign in and has no sessions.
  disabled_at   timestamptz
);
-- One live account per address; a disabled one may be recreated.
CREATE UNIQUE INDEX console_users_email ON console_users (email) WHERE disabled_at IS NULL;
CREATE INDEX console_users_company ON console_users (company_id);

CREATE TABLE console_sessions (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id      uuid NOT NULL REFERENCES console_users (id),
  token_hash   bytea NOT NULL UNIQUE,
  -- Echoed in a hidden field of every console form; a POST without it is refused.
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX console_sessions_user ON console_sessions (user_id);
