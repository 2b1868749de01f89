package guests

import (
	"context"
	"flag"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
)

// VisitFunc is what a Pass does with one hosted cluster's guest.
type VisitFunc func(ctx context.Context, hc *unstructured.Unstructured, guest client.Client) error

// Pass is an agent feature that visits every delivered hosted cluster's
// guest (Visitor.Each) once per period, one pass at a time.
type Pass struct {
	// Name names the feature and its controller.
	Name string
	// Scheme is what the guest clients know.
	Scheme *runtime.Scheme
	// Retry is how long a hosted cluster whose guest could not be read is
	// left alone before the next try (--<name>-guest-retry); Period is the
	// time between passes (--<name>-resync). Both are defaults the flags
	// override.
	Retry, Period time.Duration
	// Visit makes the visit, given the pass's Visitor (for Annotate).
	Visit func(v *Visitor) VisitFunc
	// Failing says, in the log, what failed when visits fail.
	Failing string
}

// Feature is the pass as an agent feature.
func (p Pass) Feature() agent.Feature {
	return agent.Feature{Name: p.Name,
		Flags: func(fs *flag.FlagSet) {
			fs.DurationVar(&p.Period, p.Name+"-resync", p.Period, "Time between two passes of "+p.Name+" over the hosted clusters' guests.")
			fs.DurationVar(&p.Retry, p.Name+"-guest-retry", p.Retry,
				"How long "+p.Name+" leaves a hosted cluster whose guest could not be read before trying it again.")
		},
		// Flags and Setup share this p: the flags are parsed before Setup runs.
		Setup: func(mgr ctrl.Manager, env *agent.Env) error { return p.setup(mgr, env) }}
}

func (p *Pass) setup(mgr ctrl.Manager, env *agent.Env) error {
	v, err := New(mgr, env, p.Scheme, p.Retry)
	if err != nil {
		return err
	}
	trigger := agent.NewSingleRequest(reconcile.Request{NamespacedName: types.NamespacedName{Name: p.Name}})
	trigger.Requeue()
	return trigger.Controller(mgr, p.Name).Complete(&pass{Pass: *p, visitor: v, visit: p.Visit(v)})
}

type pass struct {
	Pass
	visitor *Visitor
	visit   VisitFunc
}

// Reconcile visits every delivered hosted cluster.
func (p *pass) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	if err := p.visitor.Each(ctx, p.visit); err != nil {
		// Logged; the others were visited, and the next pass tries again.
		ctrl.LoggerFrom(ctx).Error(err, p.Failing)
	}
	return reconcile.Result{RequeueAfter: p.Period}, nil
}
