package hcdstatus_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hcdac "github.com/hcp-fleet/hcp-fleet/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

func TestConditions(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	now := metav1.NewTime(then.Add(time.Hour))
	cond := func(typ string, status metav1.ConditionStatus, reason, message string, gen int64, ltt metav1.Time) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: gen, LastTransitionTime: ltt}
	}
	want := func(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message}
	}
	other := cond("Other", metav1.ConditionFalse, "Theirs", "owned by another controller", 1, then)
	tests := []struct {
		name        string
		live        []metav1.Condition
		desired     []metav1.Condition
		generation  int64
		wantConds   []metav1.Condition
		wantChanged bool
	}{{
		name:        "new condition gets now",
		live:        []metav1.Condition{other},
		desired:     []metav1.Condition{want("Scheduled", metav1.ConditionFalse, "NoPlacementDecisions", "none")},
		generation:  2,
		wantConds:   []metav1.Condition{cond("Scheduled", metav1.ConditionFalse, "NoPlacementDecisions", "none", 2, now)},
		wantChanged: true,
	}, {
		name:        "same status, other message: lastTransitionTime kept",
		live:        []metav1.Condition{other, cond("Scheduled", metav1.ConditionFalse, "NoPlacementDecisions", "none", 2, then)},
		desired:     []metav1.Condition{want("Scheduled", metav1.ConditionFalse, "NoSuitableHostingCluster", "all full")},
		generation:  2,
		wantConds:   []metav1.Condition{cond("Scheduled", metav1.ConditionFalse, "NoSuitableHostingCluster", "all full", 2, then)},
		wantChanged: true,
	}, {
		name:        "status flip: lastTransitionTime moves",
		live:        []metav1.Condition{cond("Scheduled", metav1.ConditionFalse, "NoPlacementDecisions", "none", 2, then)},
		desired:     []metav1.Condition{want("Scheduled", metav1.ConditionTrue, "Scheduled", "on mgmt-1")},
		generation:  2,
		wantConds:   []metav1.Condition{cond("Scheduled", metav1.ConditionTrue, "Scheduled", "on mgmt-1", 2, now)},
		wantChanged: true,
	}, {
		name:        "new generation only: observedGeneration moves, lastTransitionTime kept",
		live:        []metav1.Condition{cond("Imported", metav1.ConditionTrue, "Imported", "done", 2, then)},
		desired:     []metav1.Condition{want("Imported", metav1.ConditionTrue, "Imported", "done")},
		generation:  3,
		wantConds:   []metav1.Condition{cond("Imported", metav1.ConditionTrue, "Imported", "done", 3, then)},
		wantChanged: true,
	}, {
		name: "no change",
		live: []metav1.Condition{
			cond("Delivered", metav1.ConditionTrue, "AsExpected", "applied", 4, then),
			other,
			cond("Available", metav1.ConditionFalse, "StatusUnknown", "waiting", 4, then),
		},
		desired: []metav1.Condition{
			want("Delivered", metav1.ConditionTrue, "AsExpected", "applied"),
			want("Available", metav1.ConditionFalse, "StatusUnknown", "waiting"),
		},
		generation: 4,
		wantConds: []metav1.Condition{ // sorted by type
			cond("Available", metav1.ConditionFalse, "StatusUnknown", "waiting", 4, then),
			cond("Delivered", metav1.ConditionTrue, "AsExpected", "applied", 4, then),
		},
		wantChanged: false,
	}, {
		name: "one of several changes",
		live: []metav1.Condition{
			cond("Delivered", metav1.ConditionTrue, "AsExpected", "applied", 4, then),
			cond("Available", metav1.ConditionFalse, "StatusUnknown", "waiting", 4, then),
		},
		desired: []metav1.Condition{
			want("Delivered", metav1.ConditionTrue, "AsExpected", "applied"),
			want("Available", metav1.ConditionTrue, "AsExpected", "up"),
		},
		generation: 4,
		wantConds: []metav1.Condition{
			cond("Available", metav1.ConditionTrue, "AsExpected", "up", 4, now),
			cond("Delivered", metav1.ConditionTrue, "AsExpected", "applied", 4, then),
		},
		wantChanged: true,
	}, {
		name:        "nothing desired",
		live:        []metav1.Condition{other},
		generation:  1,
		wantConds:   []metav1.Condition{},
		wantChanged: false,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			liveCopy := make([]metav1.Condition, len(tt.live))
			copy(liveCopy, tt.live)
			got, changed := hcdstatus.Conditions(tt.live, tt.desired, tt.generation, now)
			if changed != tt.wantChanged {
				t.Errorf("changed %v, want %v", changed, tt.wantChanged)
			}
			if !equality.Semantic.DeepEqual(got, tt.wantConds) {
				t.Errorf("conditions\n got %+v\nwant %+v", got, tt.wantConds)
			}
			if !equality.Semantic.DeepEqual(liveCopy, tt.live) {
				t.Errorf("live conditions modified: %+v", tt.live)
			}
		})
	}
}

// TestApplyConfiguration pins the body a status apply sends: only the fields
// set, conditions complete, times at second precision.
func TestApplyConfiguration(t *testing.T) {
	ltt := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	ac := hcdac.HostedClusterDeployment("hc1", "ns1").WithResourceVersion("7").WithStatus(hcdac.HostedClusterDeploymentStatus().
		WithHostingCluster("mgmt-1").
		WithConditions(hcdstatus.ApplyConditions([]metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionTrue,
			Reason: "Scheduled", Message: "on mgmt-1", ObservedGeneration: 3, LastTransitionTime: ltt}})...))
	data, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"kind":"HostedClusterDeployment","apiVersion":"hcpfleet.io/v1alpha1","metadata":{"name":"hc1","namespace":"ns1","resourceVersion":"7"},` +
		`"status":{"hostingCluster":"mgmt-1","conditions":[{"type":"Scheduled","status":"True","observedGeneration":3,` +
		`"lastTransitionTime":"2026-01-02T03:04:05Z","reason":"Scheduled","message":"on mgmt-1"}]}}`
	if string(data) != want {
		t.Errorf("apply body\n got %s\nwant %s", data, want)
	}
}

func TestIdentityUID(t *testing.T) {
	tests := []struct {
		name        string
		uid         types.UID
		annotations map[string]string
		want        types.UID
	}{
		{"no annotation: the object's own", "live", nil, "live"},
		{"restored: the earlier UID", "new-uid", map[string]string{hcdstatus.AnnotationIdentityUID: "3f0c-earlier"}, "3f0c-earlier"},
		{"empty annotation: the object's own", "live", map[string]string{hcdstatus.AnnotationIdentityUID: ""}, "live"},
		{"no label value: the object's own", "live", map[string]string{hcdstatus.AnnotationIdentityUID: "a/b"}, "live"},
		{"too long: the object's own", "live", map[string]string{hcdstatus.AnnotationIdentityUID: strings.Repeat("a", 64)}, "live"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &metav1.ObjectMeta{UID: tt.uid, Annotations: tt.annotations}
			if got := hcdstatus.IdentityUID(o); got != tt.want {
				t.Errorf("IdentityUID = %q, want %q", got, tt.want)
			}
		})
	}
}
