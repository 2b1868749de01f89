package objects

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// TestOwnership: PKO's collision protection. Only the extension's own
// objects pass under Prevent; IfNoController adopts objects no controller
// and no other extension owns.
func TestOwnership(t *testing.T) {
	yes := true
	object := func(owner string, controlled bool) *metav1.ObjectMeta {
		m := &metav1.ObjectMeta{Name: "x"}
		if owner != "" {
			m.Labels = map[string]string{extension.LabelExtensionUID: owner}
		}
		if controlled {
			m.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", Controller: &yes}}
		}
		return m
	}
	prevent, ifNoController := v1alpha1.CollisionProtectionPrevent, v1alpha1.CollisionProtectionIfNoController
	for _, tc := range []struct {
		name        string
		live        *metav1.ObjectMeta
		mode        v1alpha1.CollisionProtection
		uid, wantIn string // wantIn empty: claimed
	}{
		{"own object", object("me", false), prevent, "me", ""},
		{"another extension's", object("other", false), ifNoController, "me", "belongs to another extension"},
		{"unlabelled under Prevent", object("", false), prevent, "me", "collision protection Prevent"},
		{"unset mode is Prevent", object("", false), "", "me", "collision protection Prevent"},
		{"unlabelled, no controller: adopted", object("", false), ifNoController, "me", ""},
		{"unlabelled, controlled", object("", true), ifNoController, "me", "controlled by ReplicaSet rs"},
		{"no UID owns nothing", object("", false), prevent, "", "collision protection Prevent"},
	} {
		got := Ownership(tc.live, tc.mode, tc.uid)
		switch {
		case tc.wantIn == "" && got.State != "":
			t.Errorf("%s: refused (%s), want claimed", tc.name, got.Message)
		case tc.wantIn != "" && (got.State != v1alpha1.ObjectStateRefused || got.Reason != extension.ReasonObjectRefused || !strings.Contains(got.Message, tc.wantIn)):
			t.Errorf("%s: %+v, want Refused with %q", tc.name, got, tc.wantIn)
		}
	}
}

// TestAnswers: an API server's answer, errors included, shows the guest is
// reachable; transport failures and gateway errors do not.
func TestAnswers(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for err, want := range map[error]bool{
		nil:                                  true,
		apierrors.NewNotFound(gr, "x"):       true,
		apierrors.NewForbidden(gr, "x", nil): true,
		fmt.Errorf("wrapped: %w", apierrors.NewConflict(gr, "x", nil)):    true,
		apierrors.NewServiceUnavailable("down"):                           false,
		errors.New("dial tcp 10.0.0.1:6443: connect: connection refused"): false,
	} {
		if got := Answers(err); got != want {
			t.Errorf("Answers(%v) = %v, want %v", err, got, want)
		}
	}
}
