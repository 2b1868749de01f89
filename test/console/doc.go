// Package console tests the console plugin (console/) in headless Chromium
// against a local fleet's hub (internal/localfleet): a host page loads the
// plugin's remote entry through webpack module federation with the
// console's shared modules, and a proxy at /api/kubernetes forwards the
// page's requests to the hub as one identity, as the console's own proxy
// does for the signed-in user. `make console-test` runs it (it needs
// `make console` and Chromium); under `make test` it is skipped without
// starting a fleet.
package console
