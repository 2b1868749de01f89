package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// claim is collision protection's verdict on one object: an empty state
// means the object is this extension's to write (absent, already its own,
// or adopted under IfNoController); otherwise it is neither written nor
// recorded.
type claim struct {
	state           v1alpha1.ExtensionObjectState
	reason, message string
}

// claim decides, as PKO's collision protection does, whether the extension
// uid may write o: objects it created carry its UID label; another
// extension's object is never taken; with Prevent nothing else is either;
// with IfNoController an object no controller owns is adopted.
func (e *Engine) claim(ctx context.Context, t *target, o extension.Object, uid string) claim {
	if t.clusterScoped(o.Ref) && t.class == v1alpha1.PhaseClassControlPlane {
		return claim{v1alpha1.ObjectStateRefused, extension.ReasonObjectRefused, "cluster-scoped objects may not be written on the management cluster"}
	}
	// Unstructured: the manager's client reads it from the API server, not
	// from a cluster-wide cache the agent could not fill anyway.
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.Ref.GroupVersionKind())
	switch err := t.client.Get(ctx, types.NamespacedName{Namespace: o.Ref.Namespace, Name: o.Ref.Name}, live); {
	case apierrors.IsNotFound(err):
		return claim{}
	case err != nil:
		return claim{v1alpha1.ObjectStateFailed, extension.ReasonApplyFailed, "reading it: " + err.Error()}
	}
	return ownership(live, o.Collision, uid)
}

// ownership is claim's verdict on an existing object.
func ownership(live metav1.Object, mode v1alpha1.CollisionProtection, uid string) claim {
	refuse := func(msg string) claim { return claim{v1alpha1.ObjectStateRefused, extension.ReasonObjectRefused, msg} }
	switch owner := live.GetLabels()[extension.LabelExtensionUID]; {
	case uid != "" && owner == uid:
		return claim{}
	case owner != "":
		return refuse("exists and belongs to another extension; it is not taken over (collision protection)")
	case mode != v1alpha1.CollisionProtectionIfNoController:
		return refuse("exists and was not created by this extension; it is not taken over (collision protection Prevent)")
	}
	if c := metav1.GetControllerOfNoCopy(live); c != nil {
		return refuse(fmt.Sprintf("exists and is controlled by %s %s; it is not adopted (collision protection IfNoController)", c.Kind, c.Name))
	}
	return claim{}
}

// unreachableTooLong: the guest has not answered since since (RFC 3339)
// for longer than GuestTeardownTimeout.
func (e *Engine) unreachableTooLong(since string) bool {
	t, err := time.Parse(time.RFC3339, since)
	return err == nil && time.Since(t) > e.opts.GuestTeardownTimeout
}

// answers: err (nil included) came from the API server itself, not from
// failing to reach it. A gateway's 502/503/504 means the server behind it
// did not answer.
func answers(err error) bool {
	if err == nil {
		return true
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false // connection refused, timeout, DNS, TLS, discovery
	}
	switch status.Status().Code {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return false
	}
	return true
}
