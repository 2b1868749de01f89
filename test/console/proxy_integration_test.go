//go:build integration

package console

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
)

// Identity is who the proxy forwards the page's requests as: the hub
// admin's client certificate, and for a tenant an impersonated user and
// groups (the API server authorizes the impersonated user, as it does the
// console's user token).
type Identity struct {
	User   string
	Groups []string
}

// KubeProxy forwards /api/kubernetes/* to the hub's API server as id, the
// way the console's backend proxies the signed-in user's requests (HTTP
// and the websocket watches the SDK's hooks open). Credentials and
// impersonation headers the page sends are dropped: only the proxy says
// who the request is from.
func KubeProxy(hub *rest.Config, id Identity) (http.Handler, error) {
	target, err := url.Parse(hub.Host)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := rest.TLSConfigFor(hub)
	if err != nil {
		return nil, err
	}
	// HTTP/1.1 only: a websocket upgrade cannot go over HTTP/2.
	tlsConfig.NextProtos = []string{"http/1.1"}
	proxy := &httputil.ReverseProxy{
		Transport: &http.Transport{TLSClientConfig: tlsConfig, ForceAttemptHTTP2: false},
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.URL.Path = "/" + strings.TrimPrefix(strings.TrimPrefix(r.In.URL.Path, "/api/kubernetes"), "/")
			r.Out.URL.RawPath = ""
			r.Out.Host = target.Host
			for k := range r.Out.Header {
				if strings.HasPrefix(http.CanonicalHeaderKey(k), "Impersonate-") || http.CanonicalHeaderKey(k) == "Authorization" ||
					http.CanonicalHeaderKey(k) == "Cookie" || http.CanonicalHeaderKey(k) == "Origin" {
					r.Out.Header.Del(k)
				}
			}
			if id.User != "" {
				r.Out.Header.Set("Impersonate-User", id.User)
				for _, g := range id.Groups {
					r.Out.Header.Add("Impersonate-Group", g)
				}
			}
		},
	}
	if hub.BearerToken != "" {
		return nil, fmt.Errorf("the hub config uses a token; the proxy forwards as a client certificate only")
	}
	return proxy, nil
}

// HubProxy forwards /api/proxy/plugin/<plugin>/hub/* to the hub's console
// endpoint (base, HTTPS, trusted through client) with token as the bearer,
// as the console's backend does for the ConsolePlugin's proxy alias hub
// (authorization UserToken: the signed-in user's token). The page's own
// credentials and impersonation headers are dropped.
func HubProxy(plugin, base string, client *http.Client, token string) (http.Handler, error) {
	target, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	prefix := "/api/proxy/plugin/" + plugin + "/hub"
	return &httputil.ReverseProxy{
		Transport: client.Transport,
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.URL.Path = "/" + strings.TrimPrefix(strings.TrimPrefix(r.In.URL.Path, prefix), "/")
			r.Out.URL.RawPath = ""
			r.Out.Host = target.Host
			for k := range r.Out.Header {
				if strings.HasPrefix(http.CanonicalHeaderKey(k), "Impersonate-") || http.CanonicalHeaderKey(k) == "Cookie" {
					r.Out.Header.Del(k)
				}
			}
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
	}, nil
}
