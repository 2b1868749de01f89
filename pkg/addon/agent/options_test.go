package agent

import (
	"io"
	"strings"
	"testing"
)

func TestOptionsClientRateLimit(t *testing.T) {
	o := NewOptions()
	if err := o.FlagSet("run", io.Discard).Parse([]string{"--cluster-name=c1", "--kube-api-qps=7.5", "--kube-api-burst=9"}); err != nil {
		t.Fatal(err)
	}
	if o.KubeAPIQPS != 7.5 || o.KubeAPIBurst != 9 {
		t.Errorf("qps %g burst %d", o.KubeAPIQPS, o.KubeAPIBurst)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("valid options: %v", err)
	}
	o.KubeAPIBurst = 0
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--kube-api-burst") {
		t.Errorf("burst 0: %v", err)
	}
	if d := NewOptions(); d.KubeAPIQPS <= 5 || d.KubeAPIBurst <= 10 {
		t.Errorf("defaults %g/%d must be above client-go's 5/10", d.KubeAPIQPS, d.KubeAPIBurst)
	}
}
