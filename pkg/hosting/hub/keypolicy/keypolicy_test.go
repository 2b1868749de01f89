package keypolicy

import "testing"

func TestPatterns(t *testing.T) {
	p, err := Parse(" team, example.com/* ,,")
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{"team": true, "example.com/owner": true, "teams": false, "example.com/a/b": false, "other.com/x": false} {
		if p.Match(key) != want {
			t.Errorf("Match(%q) = %v", key, !want)
		}
	}
	if (Patterns{}).Match("team") {
		t.Error("the zero value matched")
	}
	if _, err := Parse("a/[b"); err == nil {
		t.Error("a malformed pattern was accepted")
	}
}

func TestInDomain(t *testing.T) {
	for key, want := range map[string]bool{
		"hcpfleet.io/x": true, "Sub.HCPFleet.io/x": true, "nothcpfleet.io/x": false, "hcpfleet.io": false, "team": false,
	} {
		if InDomain(key, "k8s.io", "hcpfleet.io") != want {
			t.Errorf("InDomain(%q) = %v", key, !want)
		}
	}
}
