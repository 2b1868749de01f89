// Package docscheck holds tests that keep docs/ true to the code: every
// condition reason the code can set is in docs/troubleshooting.md, and every
// flag of the hub and the agent is in docs/configuration.md. Tests only.
package docscheck
