-- Outgoing e-mail. Without SMTP every message is kept here (and logged) so that
-- development setups and tests can read reset and invite links.
CREATE TABLE mail_outbox (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    recipient text NOT NULL,
    subject text NOT NULL,
    body text NOT NULL,
    status text NOT NULL DEFAULT 'stored' CHECK (status IN ('stored', 'sent', 'failed')),
    error text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_outbox_recipient ON mail_outbox (lower(recipient), created_at DESC);
