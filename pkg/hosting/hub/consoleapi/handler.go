// Package consoleapi is the hub's read-only HTTPS endpoint for the console
// plugin (docs/console.md): what a user may ask about a
// HostedClusterDeployment but cannot compute with its own rights: the
// scheduler's explanation ("why not there?"), which reads ManagedClusters,
// add-ons, scores and every bound deployment, none of which a tenant may
// list; and what the create form may offer in a namespace (the releases
// and platforms of its TenantPolicy), which reads TenantPolicies, the
// namespace's labels and ClusterImageSets (createoptions.go).
//
// The console reaches it through its ConsolePlugin's proxy, which forwards
// the signed-in user's bearer token. The API server decides everything:
// the token is authenticated with a TokenReview and the user authorized
// with a SubjectAccessReview for `get hostedclusterdeployments` on the
// deployment asked about, or `create` in the namespace for the form (as
// controller-runtime's metrics filter does for /metrics, with the same
// k8s.io/apiserver delegating authenticator and authorizer, but for the
// resource instead of the path). Only then is the answer computed, with
// the hub's reader: the explanation by the same code as `kubectl hcpfleet
// explain` (fleetview.ExplainHCD), so both give the same answer; the
// options by the hub's own TenantPolicy resolution (tenancy.Resolver).
package consoleapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
)

// ExplanationPath is the explanation's route; the console asks for it
// under its proxy, /api/proxy/plugin/hcp-fleet/hub/.
const ExplanationPath = "/api/v1/namespaces/{namespace}/hostedclusterdeployments/{name}/explanation"

// MaxConcurrent explanations: each one lists the fleet's ManagedClusters,
// add-ons, scores and deployments from the API server, and any
// authenticated user allowed to get a deployment may ask; more at once are
// answered 429.
const MaxConcurrent = 4

var hcdResource = schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "hostedclusterdeployments"}

// Explanation is the endpoint's answer: the scheduler's explanation
// (candidates without Occupied: the names of other tenants' hosted
// clusters are not the asker's to read) and kubectl hcpfleet explain's
// text of it.
type Explanation struct {
	Explanation *fleetview.Explanation `json:"explanation"`
	Text        string                 `json:"text"`
}

// Handler serves ExplanationPath and CreateOptionsPath.
type Handler struct {
	authn    authenticator.Request
	authz    authorizer.Authorizer
	reader   client.Reader
	hub      fleetview.HubSettings
	policies *tenancy.Resolver
	slots    chan struct{}
	mux      *http.ServeMux
}

// NewHandler authenticates and authorizes callers through the API server
// of cfg (the hub's identity creates the TokenReviews and
// SubjectAccessReviews) and explains with reader, as the hub's settings
// say.
func NewHandler(cfg *rest.Config, reader client.Reader, hub fleetview.HubSettings) (*Handler, error) {
	authnClient, err := authenticationv1.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	authzClient, err := authorizationv1.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// k8s.io/apiserver's default webhook retry (options.DefaultAuthWebhookRetryBackoff).
	backoff := &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                 time.Minute,
		TokenAccessReviewClient:  authnClient,
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("authenticator: %w", err)
	}
	// Short caches: a RoleBinding removed takes effect within seconds.
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authzClient,
		AllowCacheTTL:             10 * time.Second,
		DenyCacheTTL:              10 * time.Second,
		WebhookRetryBackoff:       backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("authorizer: %w", err)
	}
	return newHandler(authn, authz, reader, hub), nil
}

func newHandler(authn authenticator.Request, authz authorizer.Authorizer, reader client.Reader, hub fleetview.HubSettings) *Handler {
	h := &Handler{authn: authn, authz: authz, reader: reader, hub: hub, policies: &tenancy.Resolver{Reader: reader},
		slots: make(chan struct{}, MaxConcurrent), mux: http.NewServeMux()}
	h.mux.HandleFunc(ExplanationPath, h.explain)
	h.mux.HandleFunc(CreateOptionsPath, h.createOptions)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
			Reason: metav1.StatusReasonNotFound, Message: "the hub's console endpoint serves only " + ExplanationPath + " and " + CreateOptionsPath}})
	})
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) explain(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	// Hostile input: only names the API server could hold reach a
	// SubjectAccessReview or a read.
	if !h.admit(w, r, len(validation.IsDNS1123Label(ns)) == 0 && len(validation.IsDNS1123Subdomain(name)) == 0,
		"not a namespace and HostedClusterDeployment name", "get", ns, name) {
		return
	}
	defer func() { <-h.slots }()
	x, err := fleetview.ExplainHCD(r.Context(), h.reader, h.hub, ns, name)
	if err != nil {
		if notFound := (*fleetview.HCDNotFoundError)(nil); errors.As(err, &notFound) {
			writeStatus(w, apierrors.NewNotFound(hcdResource, name))
			return
		}
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	var text strings.Builder
	if err := fleetview.RenderExplanation(&text, x); err != nil {
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	redact(x)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(Explanation{Explanation: x, Text: text.String()})
}

// admit lets a request through to the hub's reads, or answers it: a GET
// only, valid names (valid), a bearer token the API server authenticates,
// a user it authorizes to verb hostedclusterdeployments (name, or all in
// ns when name is ""), and a free slot, which the caller releases.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, valid bool, invalid, verb, ns, name string) bool {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeStatus(w, apierrors.NewMethodNotSupported(hcdResource, strings.ToLower(r.Method)))
		return false
	}
	if !valid {
		writeStatus(w, apierrors.NewBadRequest(invalid))
		return false
	}
	res, ok, err := h.authn.AuthenticateRequest(r)
	switch {
	case err != nil:
		// A bad or expired token, or the TokenReview failed: never
		// more than that in the answer.
		ctrl.Log.WithName("console-api").V(4).Info("authentication failed", "error", err.Error())
		writeStatus(w, apierrors.NewUnauthorized("Unauthorized"))
		return false
	case !ok:
		writeStatus(w, apierrors.NewUnauthorized("Unauthorized"))
		return false
	}
	attrs := authorizer.AttributesRecord{User: res.User, Verb: verb, Namespace: ns, Name: name, ResourceRequest: true,
		APIGroup: hcdResource.Group, APIVersion: v1alpha1.GroupVersion.Version, Resource: hcdResource.Resource}
	decision, reason, err := h.authz.Authorize(r.Context(), attrs)
	if err != nil {
		ctrl.Log.WithName("console-api").Error(err, "authorizing", "user", res.User.GetName())
		writeStatus(w, apierrors.NewInternalError(fmt.Errorf("the hub could not ask the API server whether the user may %s hostedclusterdeployments", verb)))
		return false
	}
	if decision != authorizer.DecisionAllow {
		// The API server's own wording (k8s.io/apiserver's forbidden
		// message), so that the console shows a refusal like any other.
		msg := fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", res.User.GetName(), verb, hcdResource.Resource, hcdResource.Group, ns)
		if reason != "" {
			msg += ": " + reason
		}
		writeStatus(w, apierrors.NewForbidden(hcdResource, name, errors.New(msg)))
		return false
	}
	select {
	case h.slots <- struct{}{}:
		return true
	default:
		writeStatus(w, apierrors.NewTooManyRequests("the hub is answering other console requests; try again", 1))
		return false
	}
}

// redact drops what the hub's rights read but the asker may not: the
// names of the hosted clusters, node pools and namespaces already bound to
// each candidate (other tenants'). The filters' verdicts that use them
// name only the asker's own names.
func redact(x *fleetview.Explanation) {
	if x.Scheduling == nil {
		return
	}
	for i := range x.Scheduling.Candidates {
		x.Scheduling.Candidates[i].Candidate.Occupied = nil
	}
}

// writeStatus answers err as the API server would: a metav1.Status.
func writeStatus(w http.ResponseWriter, err apierrors.APIStatus) {
	s := err.Status()
	s.Kind, s.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if d := s.Details; d != nil && d.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(d.RetryAfterSeconds)))
	}
	w.WriteHeader(int(s.Code))
	_ = json.NewEncoder(w).Encode(&s)
}
