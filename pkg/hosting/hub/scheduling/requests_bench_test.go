//go:build integration

package scheduling_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// hubRequests counts the requests hcp-fleet's hub sends to the hub API
// server (a transport wrapped around every client of the hub replica,
// hcpfleet.Options.HubTransport): by verb and resource for the rate at rest,
// and each write with its object and time, to count the writes per
// HostedClusterDeployment up to its delivery.
type hubRequests struct {
	info request.RequestInfoFactory

	mu     sync.Mutex
	counts map[string]int
	writes []hubWrite
}

type hubWrite struct {
	at                            time.Time
	verb, resource, sub, ns, name string
	manager                       string
	// onWire is the time from sending the request (past client-go's rate
	// limiter) to its response's headers.
	onWire time.Duration
	// body is the start of the request's body (BENCH_DEBUG_REST only).
	body string
}

// key is how the bench lines count a write: verb and resource (with its
// subresource), and the field manager for HostedClusterDeployments.
func (w hubWrite) key() string {
	key := w.verb + " " + w.resource
	if w.sub != "" {
		key += "/" + w.sub
	}
	if w.manager != "" && w.resource == "hostedclusterdeployments" {
		key += " (" + w.manager + ")"
	}
	return key
}

// debugRest, when set, prints every write of hcp-fleet's hub at rest.
var debugRest = os.Getenv("BENCH_DEBUG_REST") != ""

func bodyOf(req *http.Request) string {
	if req.GetBody == nil {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	raw, _ := io.ReadAll(io.LimitReader(body, 4000))
	return string(raw)
}

func newHubRequests() *hubRequests {
	return &hubRequests{
		info:   request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")},
		counts: map[string]int{},
	}
}

// Wrap is the hcpfleet.Options.HubTransport.
func (h *hubRequests) Wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		i := h.record(req)
		sent := time.Now()
		resp, err := next.RoundTrip(req)
		if i >= 0 {
			h.mu.Lock()
			h.writes[i].onWire = time.Since(sent)
			h.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// record counts req and returns the index of its write in h.writes (-1
// when it is no write).
func (h *hubRequests) record(req *http.Request) int {
	ri, err := h.info.NewRequestInfo(req)
	if err != nil || !ri.IsResourceRequest {
		return -1
	}
	verb := ri.Verb
	if verb == "patch" && strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch") {
		verb = "apply"
	}
	name := ri.Name
	if verb == "create" && name == "" && req.GetBody != nil {
		// A create names its object in the body (JSON for custom resources).
		if body, err := req.GetBody(); err == nil {
			var obj struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if json.NewDecoder(body).Decode(&obj) == nil {
				name = obj.Metadata.Name
			}
			_ = body.Close()
		}
	}
	key := verb + " " + ri.Resource
	if ri.Subresource != "" {
		key += "/" + ri.Subresource
	}
	// Which controller: the scheduler and delivery share a field manager,
	// the import has its own.
	manager := req.URL.Query().Get("fieldManager")
	if manager != "" && ri.Resource == "hostedclusterdeployments" {
		key += " (" + manager + ")"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[key]++
	switch verb {
	case "get", "list", "watch":
		return -1
	default:
		w := hubWrite{at: time.Now(), verb: verb, resource: ri.Resource, sub: ri.Subresource, ns: ri.Namespace, name: name, manager: manager}
		if debugRest {
			w.body = bodyOf(req)
		}
		h.writes = append(h.writes, w)
		return len(h.writes) - 1
	}
}

// onWire summarizes how long the API server took to answer the hub's
// status applies on HostedClusterDeployments in ns sent from start to end
// (the bindings and the delivery's status): against the scheduler's
// binding write duration, which includes client-go's rate limiter, it
// tells the hub API server's share.
func (h *hubRequests) onWire(start, end time.Time, ns string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ds []time.Duration
	for _, w := range h.writes {
		if w.at.Before(start) || w.at.After(end) || w.ns != ns || w.resource != "hostedclusterdeployments" || w.sub != "status" || w.verb != "apply" {
			continue
		}
		ds = append(ds, w.onWire)
	}
	return durations(ds)
}

// snapshot returns the counts so far.
func (h *hubRequests) snapshot() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int, len(h.counts))
	for k, v := range h.counts {
		out[k] = v
	}
	return out
}

// since is what was counted after before (a snapshot), leader-election
// leases apart: a replica renews its lease every few seconds whatever
// happens, as any leader-elected controller does.
func since(before, after map[string]int) (total, leases int, by []string) {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range after {
		d := v - before[k]
		if d <= 0 {
			continue
		}
		if strings.HasSuffix(k, " leases") {
			leases += d
			continue
		}
		total += d
		all = append(all, kv{k, d})
	}
	slices.SortFunc(all, func(a, b kv) int { return b.v - a.v })
	for _, e := range all {
		by = append(by, fmt.Sprintf("%s %d", e.k, e.v))
	}
	return total, leases, by
}

// writesUntil counts the writes the hub sent for each HostedClusterDeployment
// (on it, any subresource, and on its ManifestWork) from start until its
// time in until; work names a HostedClusterDeployment's ManifestWork. It
// returns the total and the count by verb and resource.
func (h *hubRequests) writesUntil(start time.Time, ns string, until map[string]time.Time, work func(ns, name string) string) (int, map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	byWork := map[string]string{}
	for name := range until {
		byWork[work(ns, name)] = name
	}
	total, by := 0, map[string]int{}
	for _, w := range h.writes {
		if w.at.Before(start) {
			continue
		}
		var hcd string
		switch {
		case w.resource == "hostedclusterdeployments" && w.ns == ns:
			hcd = w.name
		case w.resource == "manifestworks" && w.sub == "":
			hcd = byWork[w.name]
		}
		end, ok := until[hcd]
		if !ok || w.at.After(end) {
			continue
		}
		total++
		by[w.key()]++
	}
	return total, by
}

// dumpWrites prints the writes after start (BENCH_DEBUG_REST).
func (h *hubRequests) dumpWrites(start time.Time, limit int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, w := range h.writes {
		if w.at.Before(start) {
			continue
		}
		if n++; n > limit {
			return
		}
		fmt.Printf("  at rest: %s %s/%s %s/%s %s\n", w.verb, w.resource, w.sub, w.ns, w.name, strings.ReplaceAll(w.body, "\n", " "))
	}
}

// dumpHCD prints the writes for one HostedClusterDeployment from start to
// until (BENCH_DEBUG_REST).
func (h *hubRequests) dumpHCD(start time.Time, ns, name string, until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.writes {
		if w.at.Before(start) || w.at.After(until) || w.ns != ns || w.name != name || w.resource != "hostedclusterdeployments" {
			continue
		}
		fmt.Printf("  %s: %s %s/%s %s\n", name, w.verb, w.resource, w.sub, strings.ReplaceAll(w.body, "\n", " "))
	}
}

// quiet waits until the hub has sent nothing but leader-election lease
// requests for quietFor (at most two minutes): the events of the last
// transitions are sent asynchronously, after the status that caused them.
func (h *hubRequests) quiet(quietFor time.Duration) {
	deadline := time.Now().Add(2 * time.Minute)
	last := h.snapshot()
	lastChange := time.Now()
	for time.Now().Before(deadline) && time.Since(lastChange) < quietFor {
		time.Sleep(time.Second)
		now := h.snapshot()
		if total, _, _ := since(last, now); total > 0 {
			lastChange = time.Now()
		}
		last = now
	}
}
