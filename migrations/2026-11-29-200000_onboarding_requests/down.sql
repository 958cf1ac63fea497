DROP TABLE onboarding_requests;
