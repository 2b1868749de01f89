package kubeutil

import (
	"context"
	"errors"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var widget = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

func TestServed(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	if served, err := Served(mapper, widget); served || err != nil {
		t.Fatalf("before the kind is known: served=%v err=%v, want false, nil", served, err)
	}
	mapper.Add(widget, meta.RESTScopeNamespace)
	if served, err := Served(mapper, widget); !served || err != nil {
		t.Fatalf("once known: served=%v err=%v, want true, nil", served, err)
	}
}

// laterMapper serves widget from the given RESTMapping call on.
type laterMapper struct {
	meta.RESTMapper
	from, calls int
}

func (m *laterMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.calls++
	if m.calls < m.from {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return m.RESTMapper.RESTMapping(gk, versions...)
}

func TestWhenServedRetriesUntilStarted(t *testing.T) {
	known := meta.NewDefaultRESTMapper(nil)
	known.Add(widget, meta.RESTScopeNamespace)
	mapper := &laterMapper{RESTMapper: known, from: 3}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	starts := 0
	err := WhenServed(ctx, mapper, widget, time.Millisecond, func(context.Context) error {
		starts++
		if mapper.calls < 3 {
			t.Errorf("start called before the kind was served (mapping call %d)", mapper.calls)
		}
		if starts < 2 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("WhenServed: %v", err)
	}
	if starts != 2 || mapper.calls != 4 {
		t.Fatalf("start called %d times after %d mapping calls, want 2 after 4 (unserved twice, a failed start, a good one)", starts, mapper.calls)
	}
}

func TestWhenServedStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := WhenServed(ctx, meta.NewDefaultRESTMapper(nil), widget, time.Millisecond, func(context.Context) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("WhenServed = %v, want context.Canceled", err)
	}
}

func TestEstablished(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if Established(crd) {
		t.Fatal("a CRD without conditions is not established")
	}
	crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
		{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue},
		{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue},
	}
	if !Established(crd) {
		t.Fatal("Established=True: want established")
	}
}
