-- When onboarding last mailed each address (a verification link, or the
-- notice that the address has an account): a sign-up for an address mailed
-- less than 10 minutes ago sends nothing. One row per address, written by
-- an atomic upsert in the submission's transaction, so the window holds
-- across processes and two racing submissions send one mail. Owned by
-- stoa-onboarding; rows older than the window are pruned hourly.
CREATE TABLE onboarding_mail_sends (
    email text PRIMARY KEY,
    sent_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX onboarding_mail_sends_sent_at ON onboarding_mail_sends (sent_at);
