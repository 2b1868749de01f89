// Package proxy is the private-CAPI-types API proxy of openshift/enhancements#1927: CAPI clients
// (the CAPI manager, providers, HyperShift controllers, kubectl) talk to it as
// if it were the kube-apiserver, using the standard `*.cluster.x-k8s.io`
// groups, while the objects live in the private
// `*.cluster.hypershift.openshift.io` CRDs on the real apiserver.
//
// The layers:
//   - pkg/capi/groups: the one place that knows the group mapping;
//   - translate.go, jsonpatch.go, protobuf.go, discovery.go: pure functions
//     over bytes (fuzzed: they round-trip and never touch non-CAPI groups);
//   - this file: a thin net/http/httputil.ReverseProxy that decides, per
//     request, which of those functions applies to the path, the request body
//     and the response body or watch stream.
//
// Decisions, and why:
//   - Auth: the proxy holds a rest.Config and sends every request with its own
//     credentials (client-go's transport for that config); a client's
//     Authorization header is dropped. It listens on loopback only (Listen
//     refuses anything else), as a sidecar in the pod of the CAPI client, so
//     only that pod's processes can borrow its identity — which is the same
//     service account they would use anyway. Impersonate-* headers are
//     forwarded, so the apiserver still checks them against the proxy's
//     identity. Give the proxy's service account the client's RBAC, for the
//     private groups.
//   - Wire formats: responses are always JSON. The proxy removes protobuf and
//     CBOR from every Accept header (CAPI CRDs are JSON-only anyway; for
//     built-in types, a Secret owned by a Cluster must have its
//     ownerReferences translated too). Clients built with client-go or
//     controller-runtime decode whatever Content-Type comes back, so a
//     protobuf-preferring client still works. Protobuf request bodies (what
//     controller-runtime sends for built-in types) are rewritten at the wire
//     level (TranslateProtobuf) and stay protobuf. CBOR request bodies are
//     passed on untranslated (client-go only sends them behind feature gates
//     that are off by default).
//   - Aggregated discovery (application/json;g=apidiscovery.k8s.io;v=v2...) is
//     translated, not downgraded: kubectl and client-go then keep their
//     one-request discovery.
//   - Compression: Accept-Encoding is removed towards the apiserver so bodies
//     arrive uncompressed and can be translated; the loopback hop does not
//     need compression.
//   - Requests that name a private group explicitly pass through untouched, so
//     a tool can still look at the objects as they are at rest.
//   - Streaming: watch responses are translated event by event and flushed
//     after each one (ReverseProxy FlushInterval -1).
package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// maxBody bounds the request and (non-streaming) response bodies the proxy
// buffers for translation; the apiserver's own request limit is 3 MiB.
const maxBody = 256 << 20

// Proxy is an http.Handler that forwards to the apiserver of a rest.Config,
// translating standard CAPI groups to private ones and back.
type Proxy struct {
	rp     *httputil.ReverseProxy
	target *url.URL
}

// New builds a Proxy that talks to the apiserver of cfg with cfg's
// credentials.
func New(cfg *rest.Config) (*Proxy, error) {
	target, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("apiserver URL: %w", err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("apiserver transport: %w", err)
	}
	p := &Proxy{target: target}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = ""
		},
		Transport:      transport,
		FlushInterval:  -1,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   errorHandler,
	}
	return p, nil
}

type planKey struct{}

// respKind says how a response body is translated.
type respKind int

const (
	respObject respKind = iota
	respDiscovery
	respOpenAPIIndex
	respOpenAPIGroup
	respNone
)

// plan is what the proxy does with one request.
type plan struct {
	scope    Scope
	path     string
	rawQuery string
	resp     respKind
	watch    bool
}

// planFor classifies a request by its path and query. It is pure.
func planFor(method string, u *url.URL) plan {
	p := plan{path: u.Path, rawQuery: u.RawQuery, scope: ScopeOther, resp: respObject}
	q := u.Query()
	if w := q.Get("watch"); w == "true" || w == "1" {
		p.watch = true
	}
	seg := strings.Split(strings.Trim(u.Path, "/"), "/")
	switch {
	case len(seg) >= 1 && seg[0] == "apis":
		if len(seg) == 1 {
			p.resp = respDiscovery
			return p
		}
		g := seg[1]
		if groups.IsPrivate(g) {
			p.resp = respNone // explicit private request: untouched
			return p
		}
		if ng, ok := groups.ToPrivate.Group(g); ok {
			seg[1] = ng
			p.scope = ScopeCAPI
		}
		if len(seg) <= 3 {
			if method == http.MethodGet {
				p.resp = respDiscovery
			}
		} else if g == "apiextensions.k8s.io" {
			rest := seg[3:]
			if len(rest) > 0 && rest[0] == "watch" {
				p.watch = true
				rest = rest[1:]
			}
			if len(rest) > 0 && rest[0] == "customresourcedefinitions" {
				p.scope = ScopeCRD
				if len(rest) > 1 {
					rest[1], _ = groups.ToPrivate.CRDName(rest[1])
				}
				if fs := q.Get("fieldSelector"); fs != "" {
					if nfs, ok := crdFieldSelector(fs); ok {
						q.Set("fieldSelector", nfs)
						p.rawQuery = q.Encode()
					}
				}
			}
		} else if len(seg) > 3 && seg[3] == "watch" {
			p.watch = true
		}
		p.path = "/" + strings.Join(seg, "/")
	case len(seg) >= 2 && seg[0] == "openapi" && seg[1] == "v3":
		if len(seg) == 2 {
			p.resp = respOpenAPIIndex
			return p
		}
		if len(seg) >= 4 && seg[2] == "apis" {
			if groups.IsPrivate(seg[3]) {
				p.resp = respNone
				return p
			}
			if ng, ok := groups.ToPrivate.Group(seg[3]); ok {
				seg[3] = ng
				p.scope = ScopeCAPI
			}
			p.path = "/" + strings.Join(seg, "/")
		}
		p.resp = respOpenAPIGroup
	case len(seg) >= 1 && seg[0] == "api":
		if len(seg) > 2 && seg[2] == "watch" {
			p.watch = true
		}
	default:
		p.resp = respNone // /healthz, /version, /metrics, ...
	}
	return p
}

// crdFieldSelector rewrites metadata.name terms that name a standard CAPI CRD
// (an informer watching one CRD by name).
func crdFieldSelector(fs string) (string, bool) {
	terms := strings.Split(fs, ",")
	changed := false
	for i, t := range terms {
		for _, op := range []string{"!=", "==", "="} {
			k, v, ok := strings.Cut(t, op)
			if ok && strings.TrimSpace(k) == "metadata.name" {
				if nv, ok := groups.ToPrivate.CRDName(strings.TrimSpace(v)); ok {
					terms[i] = k + op + nv
					changed = true
				}
				break
			}
		}
	}
	return strings.Join(terms, ","), changed
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	pl := planFor(r.Method, r.URL)
	out := r.Clone(context.WithValue(r.Context(), planKey{}, pl))
	out.URL.Path, out.URL.RawPath, out.URL.RawQuery = pl.path, "", pl.rawQuery
	out.RequestURI = ""

	// Auth is the proxy's own (see the package doc).
	out.Header.Del("Authorization")
	// Uncompressed bodies, JSON responses.
	out.Header.Del("Accept-Encoding")
	if pl.resp != respNone {
		out.Header.Set("Accept", jsonOnlyAccept(out.Header.Get("Accept")))
	}

	if pl.resp != respNone && r.Body != nil && r.Body != http.NoBody {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		_ = r.Body.Close()
		if err != nil {
			writeStatus(w, http.StatusBadRequest, "reading request body: "+err.Error())
			return
		}
		if len(body) > maxBody {
			writeStatus(w, http.StatusRequestEntityTooLarge, "request body too large for the CAPI proxy")
			return
		}
		body, ct := translateRequestBody(body, out.Header.Get("Content-Type"), pl.scope)
		if ct != "" {
			out.Header.Set("Content-Type", ct)
		}
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.Header.Set("Content-Length", fmt.Sprint(len(body)))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	p.rp.ServeHTTP(w, out)
}

// translateRequestBody translates a request body to the private groups by its
// media type. It returns a new Content-Type when the body changed format.
func translateRequestBody(body []byte, contentType string, scope Scope) ([]byte, string) {
	if !groups.ToPrivate.ContainsSource(body) {
		return body, ""
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	var out []byte
	var err error
	newCT := ""
	switch mt {
	case "application/json", "application/merge-patch+json", "application/strategic-merge-patch+json":
		out, err = TranslateJSON(body, groups.ToPrivate, scope)
	case "application/apply-patch+yaml", "application/yaml":
		js := body
		if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
			js, err = yaml.YAMLToJSON(body)
			if err != nil {
				break
			}
		}
		out, err = TranslateJSON(js, groups.ToPrivate, scope)
		if err == nil && mt == "application/yaml" {
			newCT = "application/json"
		}
	case "application/json-patch+json":
		out, err = TranslateJSONPatch(body, groups.ToPrivate, scope)
	case "application/vnd.kubernetes.protobuf":
		out, err = TranslateProtobuf(body, groups.ToPrivate)
	default:
		return body, ""
	}
	if err != nil {
		// Let the apiserver judge a body we cannot parse.
		return body, ""
	}
	return out, newCT
}

func (p *Proxy) modifyResponse(resp *http.Response) error {
	pl, _ := resp.Request.Context().Value(planKey{}).(plan)
	if pl.resp == respNone {
		return nil
	}
	for i, v := range resp.Header.Values("Warning") {
		if nv, ok := groups.ToStandard.Text(v); ok {
			resp.Header["Warning"][i] = nv
		}
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		return nil
	}
	// The OpenAPI v3 index is served as text/plain; its translator checks
	// the JSON itself. Everything else must say JSON.
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" && pl.resp != respOpenAPIIndex && pl.resp != respOpenAPIGroup {
		return nil
	}
	if pl.watch && resp.StatusCode == http.StatusOK {
		resp.Body = newWatchTranslator(resp.Body, pl.scope)
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	if len(body) <= maxBody {
		body = translateResponseBody(body, pl)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", fmt.Sprint(len(body)))
	return nil
}

func translateResponseBody(body []byte, pl plan) []byte {
	var out []byte
	var err error
	switch pl.resp {
	case respDiscovery:
		out, err = TranslateDiscovery(body, groups.ToStandard)
	case respOpenAPIIndex:
		out, err = TranslateOpenAPIV3(body, groups.ToStandard, true)
	case respOpenAPIGroup:
		out, err = TranslateOpenAPIV3(body, groups.ToStandard, false)
	default:
		if !needsTranslation(body, pl.scope) {
			return body
		}
		out, err = TranslateJSON(body, groups.ToStandard, pl.scope)
	}
	if err != nil {
		return body
	}
	return out
}

// needsTranslation is the cheap pre-check for response bodies: they mention a
// private group, or (CRDs) a standard one that may have to be hidden.
func needsTranslation(b []byte, scope Scope) bool {
	return groups.ToStandard.ContainsSource(b) || scope == ScopeCRD && groups.ToPrivate.ContainsSource(b)
}

// jsonOnlyAccept removes protobuf and CBOR media ranges from an Accept header,
// keeping the client's order and parameters (as=Table, aggregated discovery).
func jsonOnlyAccept(accept string) string {
	var keep []string
	for _, r := range strings.Split(accept, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		base, _, _ := strings.Cut(r, ";")
		switch strings.TrimSpace(strings.ToLower(base)) {
		case "application/vnd.kubernetes.protobuf", "application/cbor", "application/cbor-seq":
			continue
		}
		keep = append(keep, r)
	}
	if len(keep) == 0 {
		return "application/json"
	}
	return strings.Join(keep, ",")
}

// watchTranslator reads a JSON watch stream (one WatchEvent object after
// another) and yields it translated. A Read never waits for more than one
// event: it returns every complete event already received, so the
// ReverseProxy writes and flushes each burst once (fewer syscalls under load)
// while a lone event still goes out the moment it arrives.
type watchTranslator struct {
	src   io.ReadCloser
	scope Scope
	in    []byte // received, not yet framed
	out   []byte // translated, not yet returned
	off   int    // read offset into out
	fr    framer
	err   error
}

func newWatchTranslator(src io.ReadCloser, scope Scope) *watchTranslator {
	return &watchTranslator{src: src, scope: scope, in: make([]byte, 0, 64<<10)}
}

func (t *watchTranslator) Read(p []byte) (int, error) {
	for t.off == len(t.out) {
		t.out, t.off = t.out[:0], 0
		t.drain()
		if len(t.out) > 0 {
			break
		}
		if t.err != nil {
			if errors.Is(t.err, io.EOF) && len(bytes.TrimSpace(t.in)) > 0 {
				// a truncated last frame: pass on what came
				t.out, t.in = append(t.out, t.in...), t.in[:0]
				break
			}
			return 0, t.err
		}
		if len(t.in) == cap(t.in) {
			t.in = append(t.in, make([]byte, len(t.in))...)[:len(t.in)]
		}
		n, err := t.src.Read(t.in[len(t.in):cap(t.in)])
		t.in = t.in[:len(t.in)+n]
		t.err = err
	}
	n := copy(p, t.out[t.off:])
	t.off += n
	return n, nil
}

// drain translates every complete event in t.in into t.out.
func (t *watchTranslator) drain() {
	start := 0
	for {
		end := t.fr.next(t.in, start)
		if end < 0 {
			break
		}
		ev := bytes.TrimSpace(t.in[start:end])
		start = end
		if len(ev) == 0 {
			continue
		}
		if needsTranslation(ev, t.scope) {
			out, drop, err := TranslateWatchEvent(ev, groups.ToStandard, t.scope)
			if drop {
				continue
			}
			if err == nil {
				ev = out
			}
		}
		t.out = append(append(t.out, ev...), '\n')
	}
	t.in = t.in[:copy(t.in, t.in[start:])]
	t.fr.rebase(start)
}

// framer finds the end of top-level JSON values in a byte stream without
// parsing them: it tracks nesting depth outside strings. It resumes where the
// previous call stopped, so each byte is looked at once.
type framer struct {
	pos      int // next byte to look at, relative to the buffer
	depth    int
	inString bool
	escape   bool
}

// next returns the end offset of the value that begins at or after start,
// or -1 if it is not complete yet.
func (f *framer) next(b []byte, start int) int {
	if f.pos < start {
		f.pos = start
	}
	for ; f.pos < len(b); f.pos++ {
		c := b[f.pos]
		if f.inString {
			switch {
			case f.escape:
				f.escape = false
			case c == '\\':
				f.escape = true
			case c == '"':
				f.inString = false
			}
			continue
		}
		switch c {
		case '"':
			f.inString = true
		case '{', '[':
			f.depth++
		case '}', ']':
			f.depth--
			if f.depth <= 0 {
				f.depth = 0
				f.pos++
				return f.pos
			}
		}
	}
	return -1
}

// rebase shifts the framer's position after the buffer dropped n bytes.
func (f *framer) rebase(n int) { f.pos -= n }

func (t *watchTranslator) Close() error { return t.src.Close() }

func errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return // the client went away
	}
	klog.FromContext(r.Context()).Error(err, "CAPI proxy: apiserver request failed", "method", r.Method, "path", r.URL.Path)
	writeStatus(w, http.StatusBadGateway, "CAPI proxy: "+err.Error())
}

// writeStatus answers with a Kubernetes Status, which every client decodes.
func writeStatus(w http.ResponseWriter, code int, msg string) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  msg,
		Reason:   metav1.StatusReasonServiceUnavailable,
		Code:     int32(code),
	}
	switch code {
	case http.StatusBadRequest:
		st.Reason = metav1.StatusReasonBadRequest
	case http.StatusRequestEntityTooLarge:
		st.Reason = metav1.StatusReasonRequestEntityTooLarge
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}

// Listen opens a loopback listener. The proxy lends its own credentials to
// whoever connects, so it refuses any address that is not loopback.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("the CAPI proxy only listens on loopback, not %q", addr)
	}
	return net.Listen("tcp", addr)
}

// NewServer returns an http.Server that serves the proxy for cfg. Serve it on
// a listener from Listen. No write timeout: watches are long-lived.
func NewServer(cfg *rest.Config) (*http.Server, error) {
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}, nil
}

// Run serves the proxy on addr (loopback) until ctx ends: the sidecar entry
// point for the agent binary. ready, if set, is called with the bound address.
func Run(ctx context.Context, cfg *rest.Config, addr string, ready func(net.Addr)) error {
	lis, err := Listen(addr)
	if err != nil {
		return err
	}
	srv, err := NewServer(cfg)
	if err != nil {
		_ = lis.Close()
		return err
	}
	if ready != nil {
		ready(lis.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		return nil
	}
}

// ClientConfig is the rest.Config a CAPI client uses to reach the proxy at
// addr (plain HTTP on loopback, no credentials: the proxy adds its own).
func ClientConfig(addr string) *rest.Config {
	return &rest.Config{Host: "http://" + addr}
}
