// Package integration holds the HostedClusterExtension tests on the local
// fleet (one shared fleet, real guest API servers); it has no code. Apart
// from pkg/extension so that the contract's unit tests start no fleet.
package integration
