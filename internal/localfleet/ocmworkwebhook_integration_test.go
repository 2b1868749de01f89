//go:build integration

package localfleet

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	workclient "open-cluster-management.io/api/client/work/clientset/versioned"
	workv1 "open-cluster-management.io/api/work/v1"
)

// OCM's executor validation runs here as on a real hub with
// NilExecutorValidating on, at both ends:
//   - the hub's ManifestWork webhook refuses a writer that may create
//     ManifestWorks but not execute-as the work's executor (nor, for a work
//     naming none, the work agent's own identity), and admits it once
//     granted;
//   - the work agent refuses a manifest its executor may not write on the
//     managed cluster (the manifest's Applied=False, nothing written there)
//     and applies it once the executor is granted.
func TestManifestWorkExecutor(t *testing.T) {
	ctx := context.Background()
	cluster := fleet.Managed[0]
	const ns, sa, writer = "executor-test", "executor-test", "work-writer"
	executor := "system:serviceaccount:" + ns + ":" + sa
	hubKube := kubernetes.NewForConfigOrDie(fleet.Hub.Config())
	spoke := kubernetes.NewForConfigOrDie(cluster.Config())
	if err := ensureNamespace(ctx, spoke, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := spoke.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	// The writer may write ManifestWorks in the cluster's namespace, and
	// nothing else.
	grant(ctx, t, hubKube, cluster.Name, "work-writer", rbacv1.PolicyRule{APIGroups: []string{workv1.GroupName},
		Resources: []string{"manifestworks"}, Verbs: []string{"get", "create", "update", "patch", "delete"}}, rbacv1.Subject{Kind: rbacv1.UserKind, Name: writer})
	cfg := rest.CopyConfig(fleet.Hub.Config())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: writer}
	asWriter := workclient.NewForConfigOrDie(cfg).WorkV1().ManifestWorks(cluster.Name)
	admin := workclient.NewForConfigOrDie(fleet.Hub.Config()).WorkV1().ManifestWorks(cluster.Name)
	// RBAC is read from an informer: until the API server has seen the
	// grant, a create is refused by RBAC rather than by the webhook, so
	// wait for the grant before asking what the webhook says.
	eventually(t, 30*time.Second, "the writer may create ManifestWorks", func(ctx context.Context) (bool, error) {
		review, err := hubKube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: writer, ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: cluster.Name, Verb: "create", Group: workv1.GroupName, Resource: "manifestworks"}}}, metav1.CreateOptions{})
		return err == nil && review.Status.Allowed, err
	})

	work := executorWork(t, cluster.Name, ns, sa, "1")
	_, err := asWriter.Create(ctx, work, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "cannot manipulate the Manifestwork with executor "+ns+"/"+sa) {
		t.Fatalf("a writer without execute-as on %s created the work: %v", executor, err)
	}
	noExecutor := work.DeepCopy()
	noExecutor.Spec.Executor = nil
	_, err = asWriter.Create(ctx, noExecutor, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "cannot manipulate the Manifestwork with executor /klusterlet-work-sa") {
		t.Fatalf("NilExecutorValidating: a writer without execute-as on the work agent's identity created a work naming no executor: %v", err)
	}
	grant(ctx, t, hubKube, cluster.Name, "work-writer-execute-as", rbacv1.PolicyRule{APIGroups: []string{workv1.GroupName},
		Resources: []string{"manifestworks"}, Verbs: []string{"execute-as"}, ResourceNames: []string{executor}}, rbacv1.Subject{Kind: rbacv1.UserKind, Name: writer})
	// RBAC is read from an informer: the grant counts once the API server
	// has seen it, so retry the create until it does.
	eventually(t, 30*time.Second, "the writer granted execute-as creates the work", func(ctx context.Context) (bool, error) {
		_, err := asWriter.Create(ctx, work, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
	t.Cleanup(func() { _ = admin.Delete(context.Background(), work.Name, metav1.DeleteOptions{}) })

	// The executor may not write ConfigMaps on the managed cluster yet: the
	// work agent reports the refusal at the work's generation, and only
	// then is the ConfigMap's absence a result.
	eventually(t, time.Minute, "the work agent refuses the manifest", func(ctx context.Context) (bool, error) {
		w, err := admin.Get(ctx, work.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := manifestApplied(w)
		return c != nil && c.Status == metav1.ConditionFalse && c.ObservedGeneration == w.Generation &&
			strings.Contains(c.Message, "not allowed to apply the resource"), nil
	})
	if _, err := spoke.CoreV1().ConfigMaps(ns).Get(ctx, "applied-as-executor", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the work agent wrote what the executor may not: %v", err)
	}

	// Granted what the work agent asks (get, create, update, patch; delete,
	// as the work owns the ConfigMap), the executor's next apply goes
	// through; a changed work is applied at once rather than at the
	// agent's retry a minute later.
	grant(ctx, t, spoke, ns, "executor-test", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"},
		Verbs: []string{"get", "create", "update", "patch", "delete"}}, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns})
	changed := executorWork(t, cluster.Name, ns, sa, "2")
	eventually(t, time.Minute, "the work agent applies the manifest once the executor may", func(ctx context.Context) (bool, error) {
		w, err := admin.Get(ctx, work.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if round(w) != "2" {
			w.Spec = changed.Spec
			if _, err := admin.Update(ctx, w, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
				return false, err
			}
			return false, nil
		}
		c := manifestApplied(w)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation {
			return false, nil
		}
		cm, err := spoke.CoreV1().ConfigMaps(ns).Get(ctx, "applied-as-executor", metav1.GetOptions{})
		return err == nil && cm.Data["round"] == "2", err
	})
}

// executorWork is a ManifestWork carrying one ConfigMap into ns of
// cluster, executed as ServiceAccount ns/sa.
func executorWork(t *testing.T, cluster, ns, sa, round string) *workv1.ManifestWork {
	t.Helper()
	raw, err := json.Marshal(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "applied-as-executor", Namespace: ns}, Data: map[string]string{"round": round}})
	if err != nil {
		t.Fatal(err)
	}
	return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "executor-test", Namespace: cluster},
		Spec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
			Executor: &workv1.ManifestWorkExecutor{Subject: workv1.ManifestWorkExecutorSubject{Type: workv1.ExecutorSubjectTypeServiceAccount,
				ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: ns, Name: sa}}},
		}}
}

// round is the data key "round" of w's ConfigMap, as the API server
// stores it (re-encoded, so compared by value).
func round(w *workv1.ManifestWork) string {
	var cm corev1.ConfigMap
	if len(w.Spec.Workload.Manifests) != 1 || json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &cm) != nil {
		return ""
	}
	return cm.Data["round"]
}

// manifestApplied is the Applied condition of w's only manifest.
func manifestApplied(w *workv1.ManifestWork) *metav1.Condition {
	if len(w.Status.ResourceStatus.Manifests) != 1 {
		return nil
	}
	return meta.FindStatusCondition(w.Status.ResourceStatus.Manifests[0].Conditions, workv1.ManifestApplied)
}

// grant binds a Role name holding rule to subject in namespace ns.
func grant(ctx context.Context, t *testing.T, kube kubernetes.Interface, ns, name string, rule rbacv1.PolicyRule, subject rbacv1.Subject) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: []rbacv1.PolicyRule{rule}}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if subject.Kind == rbacv1.UserKind {
		subject.APIGroup = rbacv1.GroupName
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{subject}}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
