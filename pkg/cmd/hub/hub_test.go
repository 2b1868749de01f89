package hub

import (
	"io"
	"strings"
	"testing"
)

func TestOptionsClientRateLimit(t *testing.T) {
	o := NewOptions()
	if err := o.FlagSet(io.Discard).Parse([]string{"--kube-api-qps=120", "--kube-api-burst=240"}); err != nil {
		t.Fatal(err)
	}
	if o.KubeAPIQPS != 120 || o.KubeAPIBurst != 240 {
		t.Errorf("qps %g burst %d", o.KubeAPIQPS, o.KubeAPIBurst)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("valid options: %v", err)
	}
	o.KubeAPIQPS = 0
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--kube-api-qps") {
		t.Errorf("qps 0: %v", err)
	}
	if d := NewOptions(); d.KubeAPIQPS <= 5 || d.KubeAPIBurst <= 10 {
		t.Errorf("defaults %g/%d must be above client-go's 5/10", d.KubeAPIQPS, d.KubeAPIBurst)
	}
}
