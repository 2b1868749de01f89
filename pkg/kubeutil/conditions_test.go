package kubeutil

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestConditionMessage(t *testing.T) {
	short := "3 HostedClusters still run on this cluster"
	if got := ConditionMessage(short); got != short {
		t.Fatalf("a short message changed: %q", got)
	}
	exact := strings.Repeat("a", MaxConditionMessageBytes)
	if got := ConditionMessage(exact); got != exact {
		t.Fatal("a message of exactly the limit changed")
	}
	// Multi-byte characters across the cut: the result stays valid UTF-8.
	for _, long := range []string{strings.Repeat("a", MaxConditionMessageBytes+1), strings.Repeat("ü", MaxConditionMessageBytes), strings.Repeat("a€", 20000)} {
		got := ConditionMessage(long)
		if len(got) > MaxConditionMessageBytes {
			t.Errorf("%d bytes, more than %d", len(got), MaxConditionMessageBytes)
		}
		if !utf8.ValidString(got) {
			t.Error("truncated message is not valid UTF-8")
		}
		if !strings.HasSuffix(got, truncatedSuffix) || !strings.HasPrefix(long, strings.TrimSuffix(got, truncatedSuffix)) {
			t.Errorf("not a marked prefix of the message: …%q", got[len(got)-40:])
		}
	}
}
