package operator

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
)

// TestCollectCredentials: the agent installs only credentials the hub
// delivered for the current reference, and says why it waits otherwise.
func TestCollectCredentials(t *testing.T) {
	const ns = "agent-ns"
	hc := &agent.HostingConfig{Source: "hcp-fleet/oidc"}
	copied := func(source string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: addon.OIDCStorageCredentials.Secret,
			Labels:      map[string]string{addon.CredentialsLabel: addon.OIDCStorageCredentials.Purpose},
			Annotations: map[string]string{addon.CredentialsSourceAnnotation: source}}, Data: data}
	}
	collect := func(hc *agent.HostingConfig, objs ...*corev1.Secret) (Credentials, *metav1.Condition) {
		t.Helper()
		b := fake.NewClientBuilder()
		for _, o := range objs {
			b = b.WithObjects(o)
		}
		r := &Reconciler{client: b.Build(), env: &agent.Env{Options: &agent.Options{AddonNamespace: ns}}}
		creds, hold, err := r.credentials(context.Background(), hc, oidcSpec())
		if err != nil {
			t.Fatal(err)
		}
		return creds, hold
	}
	expectHold := func(hold *metav1.Condition, typ, reason, msgPart string) {
		t.Helper()
		if hold == nil || hold.Type != typ || hold.Status != metav1.ConditionTrue || hold.Reason != reason || !strings.Contains(hold.Message, msgPart) {
			t.Errorf("hold %+v, want %s=True %s containing %q", hold, typ, reason, msgPart)
		}
	}

	creds, hold := collect(hc, copied(addon.CredentialRef{Name: "s3", Key: "credentials"}.Source("hcp-fleet"), map[string][]byte{addon.CredentialsKey: []byte("v1")}))
	if hold != nil || !reflect.DeepEqual(creds, Credentials{addon.OIDCStorageCredentials.Purpose: []byte("v1")}) {
		t.Errorf("delivered copy: creds %q, hold %+v", creds, hold)
	}

	_, hold = collect(hc)
	expectHold(hold, ConditionProgressing, "WaitingForCredentials", "not there yet")

	// A copy of the Secret the HostingConfig referenced before: its content
	// must not be installed as the new reference's.
	_, hold = collect(hc, copied(addon.CredentialRef{Name: "old-s3", Key: "credentials"}.Source("hcp-fleet"), map[string][]byte{addon.CredentialsKey: []byte("old")}))
	expectHold(hold, ConditionProgressing, "WaitingForCredentials", "still holds "+addon.CredentialRef{Name: "old-s3", Key: "credentials"}.Source("hcp-fleet"))

	// The hub's problems win: they need the admin, not patience.
	broken := &agent.HostingConfig{Source: "hcp-fleet/oidc", CredentialProblems: []string{"Secret hcp-fleet/s3 does not exist on the hub"}}
	creds, hold = collect(broken, copied(addon.CredentialRef{Name: "s3", Key: "credentials"}.Source("hcp-fleet"), map[string][]byte{addon.CredentialsKey: []byte("v1")}))
	expectHold(hold, ConditionDegraded, "CredentialsUnavailable", "Secret hcp-fleet/s3 does not exist on the hub")
	if creds != nil {
		t.Errorf("credentials returned while the hub reports problems: %q", creds)
	}
}
