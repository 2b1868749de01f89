// Package objects is how an extension's objects are written, wherever they
// go: the extension engine uses it for control-plane phases on the
// management cluster, the extension connector for hosted-cluster phases in
// the hosted cluster. One code path, so collision protection, labels,
// probes and deletion preconditions mean the same on both sides.
package objects

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// Verdict is an object's state after a step, with the reason and message
// of a state other than Available; an empty State from Claim means the
// object is the extension's to write.
type Verdict struct {
	State           v1alpha1.ExtensionObjectState
	Reason, Message string
}

// Claim decides, as PKO's collision protection does, whether the extension
// uid may write o (placed): objects it created carry its UID label; another
// extension's object is never taken; with Prevent nothing else is either;
// with IfNoController an object no controller owns is adopted.
func Claim(ctx context.Context, c client.Reader, o extension.Object, uid string) Verdict {
	// Unstructured: read from the API server, not from a cluster-wide
	// cache neither side could fill.
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.Ref.GroupVersionKind())
	switch err := c.Get(ctx, types.NamespacedName{Namespace: o.Ref.Namespace, Name: o.Ref.Name}, live); {
	case apierrors.IsNotFound(err):
		return Verdict{}
	case err != nil:
		return Verdict{v1alpha1.ObjectStateFailed, extension.ReasonApplyFailed, "reading it: " + err.Error()}
	}
	return Ownership(live, o.Collision, uid)
}

// Ownership is Claim's verdict on an existing object.
func Ownership(live metav1.Object, mode v1alpha1.CollisionProtection, uid string) Verdict {
	refuse := func(msg string) Verdict {
		return Verdict{v1alpha1.ObjectStateRefused, extension.ReasonObjectRefused, msg}
	}
	switch owner := live.GetLabels()[extension.LabelExtensionUID]; {
	case uid != "" && owner == uid:
		return Verdict{}
	case owner != "":
		return refuse("exists and belongs to another extension; it is not taken over (collision protection)")
	case mode != v1alpha1.CollisionProtectionIfNoController:
		return refuse("exists and was not created by this extension; it is not taken over (collision protection Prevent)")
	}
	if c := metav1.GetControllerOfNoCopy(live); c != nil {
		return refuse(fmt.Sprintf("exists and is controlled by %s %s; it is not adopted (collision protection IfNoController)", c.Kind, c.Name))
	}
	return Verdict{}
}

// Apply server-side applies one placed object Claim allowed, labelled with
// the extension (namespace/name on the hub) and its uid, under the engine's
// field manager — the connector uses it too, so what either side applied
// is the same field owner's and is taken over in place — and probes it.
func Apply(ctx context.Context, c client.Client, o extension.Object, ext, uid string, probes []v1alpha1.ExtensionProbeSet) Verdict {
	desired := o.Object.DeepCopy()
	delete(desired.Object, "status")
	labels := desired.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[extension.LabelExtension] = ext[strings.Index(ext, "/")+1:]
	labels[extension.LabelExtensionUID] = uid
	desired.SetLabels(labels)
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired), client.FieldOwner(extension.FieldManager), client.ForceOwnership); err != nil {
		return Verdict{v1alpha1.ObjectStateFailed, extension.ReasonApplyFailed, "applying it: " + err.Error()}
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.Ref.GroupVersionKind())
	if err := c.Get(ctx, types.NamespacedName{Namespace: o.Ref.Namespace, Name: o.Ref.Name}, live); err != nil {
		return Verdict{v1alpha1.ObjectStateFailed, extension.ReasonApplyFailed, "reading it back: " + err.Error()}
	}
	if msg := extension.Probe(probes, live); msg != "" {
		return Verdict{v1alpha1.ObjectStateUnavailable, extension.ReasonProbeFailure, msg}
	}
	return Verdict{State: v1alpha1.ObjectStateAvailable}
}

// Delete deletes ref if it carries the extension's uid, with that object's
// UID as precondition (a re-created object of the same name is not hit),
// and says whether it is gone: deleted, absent, or not the extension's —
// then never deleted (collision protection), only dropped from the record.
// answered: the API server answered, so a failure is not it being
// unreachable.
func Delete(ctx context.Context, c client.Client, ref extension.ObjectRef, uid string) (gone, answered bool, err error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ref.GroupVersionKind())
	err = c.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, u)
	answered = Answers(err)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return true, answered, nil
	case err != nil:
		return false, answered, err
	case uid == "" || u.GetLabels()[extension.LabelExtensionUID] != uid:
		// Not this extension's (any more, or ever: another extension's
		// object it was refused): never delete someone else's object.
		return true, answered, nil
	case u.GetDeletionTimestamp() != nil:
		return false, answered, nil
	}
	objUID := u.GetUID()
	err = c.Delete(ctx, u, client.Preconditions{UID: &objUID}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	return false, answered, client.IgnoreNotFound(err)
}

// Answers: err (nil included) came from the API server itself, not from
// failing to reach it. A gateway's 502/503/504 means the server behind it
// did not answer.
func Answers(err error) bool {
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
