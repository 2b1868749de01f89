package operator

// CredentialsCopyRules is for the integration tests, which check the rule
// against a real API server.
var CredentialsCopyRules = credentialsCopyRules
