package extension

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/util/jsonpath"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// celCostLimit bounds one probe evaluation, as the API server bounds one
// validation rule (its per-call limit).
const celCostLimit = 1_000_000

// maxMessage bounds a probe failure message taken from an object.
const maxMessage = 256

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
	celCache   sync.Map // rule -> cel.Program or error
)

// env is the API server's CEL environment (the Kubernetes libraries:
// lists, regex, URLs, quantities, IPs, CIDRs, format, …, at the
// compatibility version of the pinned apiserver) with self, the object.
func env() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		base := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion(), true)
		set, err := base.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions:        []cel.EnvOption{cel.Variable("self", cel.DynType)},
		})
		if err != nil {
			celEnvErr = err
			return
		}
		celEnv, celEnvErr = set.Env(environment.StoredExpressions)
	})
	return celEnv, celEnvErr
}

// CompileCEL compiles a probe rule once; the hub uses it to refuse rules
// that do not compile before anything is delivered.
func CompileCEL(rule string) (cel.Program, error) {
	if p, ok := celCache.Load(rule); ok {
		if err, isErr := p.(error); isErr {
			return nil, err
		}
		return p.(cel.Program), nil
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(rule)
	if iss.Err() != nil {
		err = fmt.Errorf("CEL rule %q does not compile: %w", rule, iss.Err())
	} else if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
		err = fmt.Errorf("CEL rule %q yields %s, not a bool", rule, ast.OutputType())
	}
	var prog cel.Program
	if err == nil {
		prog, err = e.Program(ast, cel.CostLimit(celCostLimit), cel.InterruptCheckFrequency(100))
	}
	if err != nil {
		celCache.Store(rule, err)
		return nil, err
	}
	celCache.Store(rule, prog)
	return prog, nil
}

// ProbeProblems are the probe definitions that cannot work (CEL that does
// not compile, label selectors that do not parse).
func ProbeProblems(sets []v1alpha1.ExtensionProbeSet) []string {
	var out []string
	for i, s := range sets {
		if s.Selector.Selector != nil {
			if _, err := metav1.LabelSelectorAsSelector(s.Selector.Selector); err != nil {
				out = append(out, fmt.Sprintf("availabilityProbes[%d].selector.selector: %v", i, err))
			}
		}
		for j, p := range s.Probes {
			if p.CEL != nil {
				if _, err := CompileCEL(p.CEL.Rule); err != nil {
					out = append(out, fmt.Sprintf("availabilityProbes[%d].probes[%d].cel: %v", i, j, err))
				}
			}
			for _, path := range fieldPaths(p) {
				if _, err := parsePath(path); err != nil {
					out = append(out, fmt.Sprintf("availabilityProbes[%d].probes[%d].fieldsEqual: %v", i, j, err))
				}
			}
		}
	}
	return out
}

func fieldPaths(p v1alpha1.ExtensionProbe) []string {
	if p.FieldsEqual == nil {
		return nil
	}
	return []string{p.FieldsEqual.FieldA, p.FieldsEqual.FieldB}
}

// Probe evaluates the probes that select obj, in order, and returns the
// first failure's message ("" when obj is available). An object no probe
// selects is available once it exists.
func Probe(sets []v1alpha1.ExtensionProbeSet, obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	for _, s := range sets {
		if s.Selector.Kind.Group != gvk.Group || s.Selector.Kind.Kind != gvk.Kind {
			continue
		}
		if s.Selector.Selector != nil {
			sel, err := metav1.LabelSelectorAsSelector(s.Selector.Selector)
			if err != nil || !sel.Matches(labels.Set(obj.GetLabels())) {
				continue
			}
		}
		for _, p := range s.Probes {
			if msg := probeOne(p, obj); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func probeOne(p v1alpha1.ExtensionProbe, obj *unstructured.Unstructured) string {
	switch {
	case p.Condition != nil:
		return conditionProbe(p.Condition, obj)
	case p.FieldsEqual != nil:
		return fieldsEqualProbe(p.FieldsEqual, obj)
	case p.CEL != nil:
		return celProbe(p.CEL, obj)
	}
	return ""
}

// conditionProbe passes when the condition has the status, for the object's
// current generation: a condition's observedGeneration, or else the
// status's, must not be older than metadata.generation.
func conditionProbe(c *v1alpha1.ConditionProbe, obj *unstructured.Unstructured) string {
	want := fmt.Sprintf("condition %s=%s", c.Type, c.Status)
	if og, found, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration"); found && og < obj.GetGeneration() {
		return fmt.Sprintf("%s: status not yet observed for generation %d", want, obj.GetGeneration())
	}
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conditions {
		cond, _ := raw.(map[string]any)
		if t, _ := cond["type"].(string); t != c.Type {
			continue
		}
		if og, ok := cond["observedGeneration"].(int64); ok && og < obj.GetGeneration() {
			return fmt.Sprintf("%s: condition not yet observed for generation %d", want, obj.GetGeneration())
		}
		status, _ := cond["status"].(string)
		if status == c.Status {
			return ""
		}
		msg := fmt.Sprintf("%s, is %s", want, status)
		if m, _ := cond["message"].(string); m != "" {
			msg += ": " + truncate(m)
		}
		return msg
	}
	return want + ", condition missing"
}

func fieldsEqualProbe(f *v1alpha1.FieldsEqualProbe, obj *unstructured.Unstructured) string {
	a, okA := lookup(f.FieldA, obj)
	b, okB := lookup(f.FieldB, obj)
	switch {
	case !okA:
		return fmt.Sprintf("%s == %s: %s is missing", f.FieldA, f.FieldB, f.FieldA)
	case !okB:
		return fmt.Sprintf("%s == %s: %s is missing", f.FieldA, f.FieldB, f.FieldB)
	case !reflect.DeepEqual(a, b):
		return fmt.Sprintf("%s == %s: %v != %v", f.FieldA, f.FieldB, truncate(fmt.Sprint(a)), truncate(fmt.Sprint(b)))
	}
	return ""
}

func celProbe(c *v1alpha1.CELProbe, obj *unstructured.Unstructured) string {
	prog, err := CompileCEL(c.Rule)
	if err != nil {
		return truncate(err.Error())
	}
	out, _, err := prog.Eval(map[string]any{"self": obj.Object})
	if err != nil {
		// A missing field is a failing probe with the author's message, as
		// the object is not there yet; the error says which.
		return c.Message + " (" + truncate(err.Error()) + ")"
	}
	if out != types.True {
		return c.Message
	}
	return ""
}

func parsePath(path string) (*jsonpath.JSONPath, error) {
	jp := jsonpath.New("probe")
	if err := jp.Parse("{" + path + "}"); err != nil {
		return nil, fmt.Errorf("path %q: %w", path, err)
	}
	return jp, nil
}

// lookup reads one field by JSONPath; a path matching nothing, or more
// than one value, is missing.
func lookup(path string, obj *unstructured.Unstructured) (any, bool) {
	jp, err := parsePath(path)
	if err != nil {
		return nil, false
	}
	results, err := jp.FindResults(obj.Object)
	if err != nil || len(results) != 1 || len(results[0]) != 1 {
		return nil, false
	}
	v := results[0][0]
	if !v.IsValid() || !v.CanInterface() {
		return nil, false
	}
	return normalize(v.Interface()), true
}

// normalize makes numbers comparable whatever their Go type.
func normalize(v any) any {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int32:
		return float64(n)
	case int64:
		return float64(n)
	case float32:
		return float64(n)
	}
	return v
}

func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxMessage {
		return s
	}
	var b bytes.Buffer
	b.WriteString(s[:maxMessage])
	b.WriteString("…")
	return b.String()
}
