package consoleapi

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/blang/semver/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

// CreateOptionsPath is what the console's create form may offer in a
// namespace: the releases and platforms of the TenantPolicy that governs
// it. A tenant can read neither TenantPolicies (cluster-scoped, the
// admin's), nor the namespace labels that select one, nor
// ClusterImageSets, so the hub answers for whoever may create
// HostedClusterDeployments there.
const CreateOptionsPath = "/api/v1/namespaces/{namespace}/createoptions"

// CreateOptions is CreateOptionsPath's answer: the policy's offer and the
// releases ClusterImageSets publish that the policy lets the namespace
// run.
type CreateOptions struct {
	tenancy.Offer
	Releases []Release `json:"releases"`
	// ReleasesUnknown says why the hub could not list ClusterImageSets
	// ("" when it could; a hub without Hive has none).
	ReleasesUnknown string `json:"releasesUnknown,omitempty"`
}

// Release is one ClusterImageSet the form offers.
type Release struct {
	// Name of the ClusterImageSet.
	Name  string `json:"name"`
	Image string `json:"image"`
	// Version is the OpenShift version the set names (its label or ACM's
	// img<version>-... name), "" when it names none.
	Version string `json:"version,omitempty"`
}

func (h *Handler) createOptions(w http.ResponseWriter, r *http.Request) {
	ns := r.PathValue("namespace")
	if !h.admit(w, r, len(validation.IsDNS1123Label(ns)) == 0, "not a namespace", "create", ns, "") {
		return
	}
	defer func() { <-h.slots }()
	policy, err := h.policies.For(r.Context(), ns)
	if err != nil {
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(olmhub.ClusterImageSetGVK.GroupVersion().WithKind("ClusterImageSetList"))
	var sets []unstructured.Unstructured
	unknown := ""
	switch err := h.reader.List(r.Context(), list); {
	case err == nil:
		sets = list.Items
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
	default:
		// Not the API server's words: they would name the hub's identity.
		unknown = "the hub could not list ClusterImageSets"
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(createOptions(policy, sets, unknown))
}

// createOptions is what policy offers with the ClusterImageSets sets:
// only the releases it allows (none when it allows nothing), newest
// version first, then by name. Pure.
func createOptions(policy *tenancy.Policy, sets []unstructured.Unstructured, unknown string) CreateOptions {
	o := CreateOptions{Offer: policy.Offer(), Releases: []Release{}, ReleasesUnknown: unknown}
	if o.Refused != "" {
		return o
	}
	for _, s := range sets {
		image, _, _ := unstructured.NestedString(s.Object, "spec", "releaseImage")
		if image == "" || policy.ReleaseAllowed(image) != "" {
			continue
		}
		version, _ := olmhub.ImageSetVersion([]unstructured.Unstructured{s}, image)
		o.Releases = append(o.Releases, Release{Name: s.GetName(), Image: image, Version: version})
	}
	slices.SortFunc(o.Releases, func(a, b Release) int {
		va, errA := semver.Parse(a.Version)
		vb, errB := semver.Parse(b.Version)
		switch {
		case errA == nil && errB == nil && !va.EQ(vb):
			return vb.Compare(va)
		case errA == nil && errB != nil:
			return -1
		case errA != nil && errB == nil:
			return 1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return o
}
