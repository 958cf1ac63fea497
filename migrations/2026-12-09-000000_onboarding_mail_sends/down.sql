DROP TABLE onboarding_mail_sends;
