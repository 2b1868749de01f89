package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"
)

// maxAssetBytes bounds what the server loads: the plugin's build is a few
// hundred KiB; a directory far larger than that is a wrong mount, and
// refusing to start says so instead of filling the pod's memory.
const maxAssetBytes = 64 << 20

// Cache-Control values. The console fetches plugin-manifest.json at each
// load and must see a new version at once, so it revalidates every time
// (its ETag makes that a 304); so does an unhashed remote entry
// (plugin-entry.js). Webpack names the production remote entry and every
// chunk after its content hash, so such a name never changes content and
// the browser may keep it for good.
const (
	cacheRevalidate = "no-cache"
	cacheImmutable  = "public, max-age=31536000, immutable"
)

// contentHash matches a webpack content hash in a file name
// ([contenthash]/[chunkhash], 16 or more hex digits between separators:
// "exposed-HCDList-chunk-0f3c9a1b2d4e5f60a7b8.min.js").
var contentHash = regexp.MustCompile(`(^|[.-])[0-9a-f]{16,}([.-]|$)`)

// contentTypes are the types of what a console plugin build holds. Other
// extensions are served as application/octet-stream, with nosniff: a
// browser neither runs nor renders them.
var contentTypes = map[string]string{
	".js":    "application/javascript; charset=utf-8",
	".mjs":   "application/javascript; charset=utf-8",
	".json":  "application/json; charset=utf-8",
	".map":   "application/json; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".jpg":   "image/jpeg",
	".jpeg":  "image/jpeg",
	".gif":   "image/gif",
	".ico":   "image/x-icon",
	".woff":  "font/woff",
	".woff2": "font/woff2",
	".ttf":   "font/ttf",
	".txt":   "text/plain; charset=utf-8",
}

// asset is one file, loaded at start.
type asset struct {
	data         []byte
	etag         string
	contentType  string
	cacheControl string
}

// assets serves a fixed set of files read once from a directory. The set is
// the allow-list: only regular files found at start are served, never a
// directory (no listing), a symlink or a path outside the directory. The
// image's root file system is read-only, so nothing changes underneath.
type assets struct {
	files map[string]*asset
	// modTime is a fixed time for every file: the image's files carry
	// none that means anything; the ETag decides freshness.
	modTime time.Time
}

// loadAssets reads every regular file under fsys.
func loadAssets(fsys fs.FS) (*assets, error) {
	a := &assets{files: map[string]*asset{}}
	total := 0
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			// Directories are walked, never served; symlinks and
			// devices are skipped.
			return nil
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		total += len(data)
		if total > maxAssetBytes {
			return fmt.Errorf("more than %d bytes of assets: is this the plugin's build?", maxAssetBytes)
		}
		sum := sha256.Sum256(data)
		a.files[name] = &asset{
			data:         data,
			etag:         `"` + hex.EncodeToString(sum[:16]) + `"`,
			contentType:  contentTypeOf(name),
			cacheControl: cacheControlOf(name),
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, ok := a.files[manifestFile]; !ok {
		return nil, fmt.Errorf("no %s: not a console plugin build (make console builds console/dist)", manifestFile)
	}
	return a, nil
}

// manifestFile is what the console loads first
// (/api/plugins/<name>/plugin-manifest.json).
const manifestFile = "plugin-manifest.json"

func contentTypeOf(name string) string {
	if ct, ok := contentTypes[strings.ToLower(path.Ext(name))]; ok {
		return ct
	}
	return "application/octet-stream"
}

func cacheControlOf(name string) string {
	if contentHash.MatchString(path.Base(name)) {
		return cacheImmutable
	}
	return cacheRevalidate
}

func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// The console's proxy strips /api/plugins/<name>; what is left is a
	// path in the build. Cleaning it makes "a/../b" and "//b" the names
	// they mean; the lookup does the rest (there is no file "..").
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	f, ok := a.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", f.cacheControl)
	h.Set("ETag", f.etag)
	// ServeContent answers conditional (If-None-Match: 304) and range
	// requests, and HEAD.
	http.ServeContent(w, r, name, a.modTime, bytes.NewReader(f.data))
}

// healthz answers the probes without touching the assets: the server is
// ready once it has loaded them, which happens before it listens.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// newMux routes the probes apart from the assets, so that a file named
// healthz in a build cannot shadow them.
func newMux(a *assets) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("/", a)
	return mux
}
