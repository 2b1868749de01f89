package operatorlimits

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

func TestEncode(t *testing.T) {
	if v, _ := Encode(nil); v != "[]" {
		t.Errorf("no limits encode as %q, want [] (a report, not a missing one)", v)
	}
	var many []olm.Limit
	for i := range olm.MaxReportedLimits + 5 {
		many = append(many, olm.Limit{Namespace: "ns", Name: fmt.Sprintf("op-%02d", i), MaxOpenShiftVersion: "4.30"})
	}
	many = append(many, olm.Limit{Namespace: "ns", Name: "low", MaxOpenShiftVersion: "4.18"},
		olm.Limit{Namespace: "ns", Name: "broken", Invalid: "empty"})
	v, err := Encode(many)
	if err != nil {
		t.Fatal(err)
	}
	var got []olm.Limit
	if err := json.Unmarshal([]byte(v), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != olm.MaxReportedLimits || got[0].Name != "broken" || got[1].Name != "low" {
		t.Errorf("cut report keeps %d, first %v", len(got), got[:2])
	}
}
