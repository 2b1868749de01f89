package main

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

// A build as `make console` writes it: the manifest, the remote entry
// (unhashed, as older SDKs name it, and hashed), the hashed chunks, locales (console.openshift.io i18n) and a subdirectory.
func build() fstest.MapFS {
	return fstest.MapFS{
		"plugin-manifest.json": {Data: []byte(`{"name":"hcp-fleet","version":"0.1.0"}`)},
		"plugin-entry.js":      {Data: []byte(`window.loadPluginEntry("hcp-fleet@0.1.0", {});`)},
		// SDK 4.22's production remote entry is named after its content.
		"plugin-entry.339c8f0fd1342cd3c28f.min.js":          {Data: []byte(`window.loadPluginEntry("hcp-fleet@0.1.0", {"hashed": true});`)},
		"exposed-HCDList-chunk-0f3c9a1b2d4e5f60a7b8.min.js": {Data: []byte(`(self.webpackChunk=[]).push([1])`)},
		"main-bundle-89abcdef01234567.min.css":              {Data: []byte(`.x{}`)},
		"locales/en/plugin__hcp-fleet.json":                 {Data: []byte(`{"Fleet":"Fleet"}`)},
		"assets/logo.svg":                                   {Data: []byte(`<svg/>`)},
		"notes.weird":                                       {Data: []byte(`<script>alert(1)</script>`)},
		"link-to-elsewhere.js":                              {Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink},
		"exposed-Fleet-chunk-deadbeef.js":                   {Data: []byte(`short hash`)},
	}
}

func serve(t *testing.T, a *assets, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	newMux(a).ServeHTTP(rec, req)
	return rec
}

func load(t *testing.T) *assets {
	t.Helper()
	a, err := loadAssets(build())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Each kind of file gets its own type (browsers refuse a script or a
// stylesheet of another type under nosniff), the manifest and an unhashed
// remote entry revalidate at every load while what is named after its
// content is kept for good, and the body is the file.
func TestServesFilesWithTypesAndCaching(t *testing.T) {
	a := load(t)
	for _, tc := range []struct {
		path, contentType, cache string
	}{
		{"/plugin-manifest.json", "application/json; charset=utf-8", cacheRevalidate},
		{"/plugin-entry.js", "application/javascript; charset=utf-8", cacheRevalidate},
		{"/plugin-entry.339c8f0fd1342cd3c28f.min.js", "application/javascript; charset=utf-8", cacheImmutable},
		{"/exposed-HCDList-chunk-0f3c9a1b2d4e5f60a7b8.min.js", "application/javascript; charset=utf-8", cacheImmutable},
		{"/main-bundle-89abcdef01234567.min.css", "text/css; charset=utf-8", cacheImmutable},
		{"/locales/en/plugin__hcp-fleet.json", "application/json; charset=utf-8", cacheRevalidate},
		{"/assets/logo.svg", "image/svg+xml", cacheRevalidate},
		// An unknown extension is never sniffed into HTML.
		{"/notes.weird", "application/octet-stream", cacheRevalidate},
		// Eight hex digits are not a webpack content hash.
		{"/exposed-Fleet-chunk-deadbeef.js", "application/javascript; charset=utf-8", cacheRevalidate},
	} {
		rec := serve(t, a, http.MethodGet, tc.path, nil)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d", tc.path, rec.Code)
			continue
		}
		h := rec.Header()
		if h.Get("Content-Type") != tc.contentType || h.Get("Cache-Control") != tc.cache || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("ETag") == "" {
			t.Errorf("GET %s: Content-Type %q, Cache-Control %q, nosniff %q, ETag %q; want %q, %q", tc.path,
				h.Get("Content-Type"), h.Get("Cache-Control"), h.Get("X-Content-Type-Options"), h.Get("ETag"), tc.contentType, tc.cache)
		}
		if want := string(build()[strings.TrimPrefix(tc.path, "/")].Data); rec.Body.String() != want {
			t.Errorf("GET %s: body %q, want %q", tc.path, rec.Body.String(), want)
		}
	}
}

// Revalidating the manifest costs a 304 without a body when it did not
// change.
func TestRevalidation(t *testing.T) {
	a := load(t)
	first := serve(t, a, http.MethodGet, "/plugin-manifest.json", nil)
	etag := first.Header().Get("ETag")
	again := serve(t, a, http.MethodGet, "/plugin-manifest.json", http.Header{"If-None-Match": {etag}})
	if again.Code != http.StatusNotModified || again.Body.Len() != 0 {
		t.Errorf("If-None-Match %s: %d with %d bytes, want 304 and no body", etag, again.Code, again.Body.Len())
	}
	other := serve(t, a, http.MethodGet, "/plugin-manifest.json", http.Header{"If-None-Match": {`"stale"`}})
	if other.Code != http.StatusOK {
		t.Errorf("If-None-Match of another version: %d, want 200", other.Code)
	}
}

// Directories are never listed, symlinks never followed, paths never leave
// the build, and nothing but GET and HEAD is answered.
func TestServesNothingElse(t *testing.T) {
	a := load(t)
	for _, p := range []string{"/", "/locales", "/locales/", "/locales/en/", "/assets/", "/link-to-elsewhere.js",
		"/nope.js", "/%2e%2e/%2e%2e/etc/passwd", "/locales/../../etc/passwd"} {
		rec := serve(t, a, http.MethodGet, p, nil)
		// ServeMux answers unclean paths with a redirect to the clean
		// one (301, or 307 for ".."), which is then looked up like any
		// other.
		if rec.Code == http.StatusMovedPermanently || rec.Code == http.StatusTemporaryRedirect {
			rec = serve(t, a, http.MethodGet, rec.Header().Get("Location"), nil)
		}
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, rec.Code)
		}
		if strings.Contains(rec.Body.String(), "href") || strings.Contains(rec.Body.String(), "plugin") {
			t.Errorf("GET %s answered %q", p, rec.Body.String())
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		rec := serve(t, a, m, "/plugin-manifest.json", nil)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d (Allow %q), want 405", m, rec.Code, rec.Header().Get("Allow"))
		}
	}
	head := serve(t, a, http.MethodHead, "/plugin-entry.js", nil)
	if head.Code != http.StatusOK || head.Body.Len() != 0 || head.Header().Get("Content-Type") == "" {
		t.Errorf("HEAD: %d, %d bytes, want 200 and headers only", head.Code, head.Body.Len())
	}
}

// The probes answer apart from the build.
func TestHealthz(t *testing.T) {
	rec := serve(t, load(t), http.MethodGet, "/healthz", nil)
	if rec.Code != http.StatusOK || rec.Body.String() != "ok\n" {
		t.Errorf("/healthz: %d %q", rec.Code, rec.Body.String())
	}
}

// A directory that is not a plugin build, or a far too large one, stops
// the server at start instead of serving it.
func TestRefusesWhatIsNotABuild(t *testing.T) {
	b := build()
	delete(b, "plugin-manifest.json")
	if _, err := loadAssets(b); err == nil || !strings.Contains(err.Error(), "plugin-manifest.json") {
		t.Errorf("a build without its manifest: %v", err)
	}
	big := build()
	big["huge.bin"] = &fstest.MapFile{Data: make([]byte, maxAssetBytes+1)}
	if _, err := loadAssets(big); err == nil || !strings.Contains(err.Error(), "bytes of assets") {
		t.Errorf("a build of %d bytes: %v", maxAssetBytes+1, err)
	}
}
