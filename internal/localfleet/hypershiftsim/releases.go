package hypershiftsim

import "sync"

// releaseDigests are the release images pinned by digest whose metadata the
// stand-in serves (image → OpenShift version): the real operator reads a
// release's version from its payload, which the local fleet has none of,
// so a digest the stand-in does not know is not a valid release image.
var releaseDigests sync.Map

// ServeRelease makes the stand-ins of this process know the release image
// (pinned by digest) as OpenShift version, as if its payload said so.
func ServeRelease(image, version string) { releaseDigests.Store(image, version) }
