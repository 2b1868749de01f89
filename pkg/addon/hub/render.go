package hub

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/manifests"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// AgentValues is everything that varies between management clusters in the
// agent's manifests.
type AgentValues struct {
	ClusterName      string
	InstallNamespace string
	Image            string
	ImagePullPolicy  corev1.PullPolicy
	NodeSelector     map[string]string
	Tolerations      []corev1.Toleration
	// Resources by container ID "<resource>:<name>:<container>" pattern, as
	// AddOnDeploymentConfig resourceRequirements match them.
	Resources []ContainerResources
	ProxyEnv  []corev1.EnvVar
	// HostingConfig handed to the agent through a ConfigMap.
	HostingConfigSource string
	HostingConfigHash   string
	HostingConfigSpec   string
	// Credentials are the copies of the Secrets the HostingConfig
	// references; CredentialProblems the references the hub could not
	// resolve, as messages for the admin (the agent reports them).
	Credentials        []CredentialCopy
	CredentialProblems []string
}

// CredentialCopy is the content of one Secret key a HostingConfig
// references, copied into the agent's install namespace.
type CredentialCopy struct {
	addon.Credential
	// Source is "<namespace>/<name>[<key>]" of the Secret on the hub.
	Source string
	Data   []byte
}

// ContainerResources are resource requirements for the containers whose ID
// matches the regular expression.
type ContainerResources struct {
	ContainerIDRegex string
	Resources        corev1.ResourceRequirements
}

var (
	baseOnce    sync.Once
	baseObjects []client.Object
	baseErr     error
	codecs      = serializer.NewCodecFactory(newScheme())
)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	return s
}

// agentBase decodes the embedded agent manifests once.
func agentBase() ([]client.Object, error) {
	baseOnce.Do(func() {
		entries, err := manifests.Agent.ReadDir("agent")
		if err != nil {
			baseErr = err
			return
		}
		dec := codecs.UniversalDeserializer()
		for _, e := range entries {
			data, err := manifests.Agent.ReadFile("agent/" + e.Name())
			if err != nil {
				baseErr = err
				return
			}
			for _, doc := range strings.Split(string(data), "\n---\n") {
				if strings.TrimSpace(doc) == "" {
					continue
				}
				obj, _, err := dec.Decode([]byte(doc), nil, nil)
				if err != nil {
					baseErr = fmt.Errorf("manifests/agent/%s: %w", e.Name(), err)
					return
				}
				baseObjects = append(baseObjects, obj.(client.Object))
			}
		}
	})
	return baseObjects, baseErr
}

// RenderAgent computes the agent's manifests for one management cluster. It
// is a pure function of v: the same values always give the same objects.
func RenderAgent(v AgentValues) ([]runtime.Object, error) {
	base, err := agentBase()
	if err != nil {
		return nil, err
	}
	if v.ClusterName == "" || v.InstallNamespace == "" || v.Image == "" {
		return nil, fmt.Errorf("cluster name, install namespace and image are required (got %q, %q, %q)", v.ClusterName, v.InstallNamespace, v.Image)
	}
	var out []runtime.Object
	for _, b := range base {
		obj := b.DeepCopyObject().(client.Object)
		if obj.GetNamespace() != "" {
			obj.SetNamespace(v.InstallNamespace)
		}
		switch o := obj.(type) {
		case *corev1.Namespace:
			o.Name = v.InstallNamespace
			if v.InstallNamespace != addon.DefaultInstallNamespace {
				// A namespace chosen by the admin may hold other things:
				// keep it when the add-on goes.
				o.Annotations = map[string]string{"addon.open-cluster-management.io/deletion-orphan": ""}
			}
		case *rbacv1.ClusterRoleBinding:
			for i := range o.Subjects {
				o.Subjects[i].Namespace = v.InstallNamespace
			}
		case *rbacv1.RoleBinding:
			for i := range o.Subjects {
				o.Subjects[i].Namespace = v.InstallNamespace
			}
		case *appsv1.Deployment:
			applyPodValues(&o.Spec.Template.Spec, "deployments:"+o.Name, v)
		case *batchv1.Job:
			applyPodValues(&o.Spec.Template.Spec, "jobs:"+o.Name, v)
		}
		out = append(out, obj)
	}
	// The credential copies come before the ConfigMap: the work agent applies
	// manifests in order, so an agent that sees a new HostingConfig finds
	// the credentials it references already updated.
	for _, c := range v.Credentials {
		out = append(out, &corev1.Secret{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{
				Name: c.Secret, Namespace: v.InstallNamespace,
				Labels:      map[string]string{"app.kubernetes.io/part-of": addon.Name, addon.CredentialsLabel: c.Purpose},
				Annotations: map[string]string{addon.CredentialsSourceAnnotation: c.Source},
			},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{addon.CredentialsKey: c.Data},
		})
	}
	hostingConfig := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: addon.HostingConfigMap, Namespace: v.InstallNamespace},
		Data: map[string]string{
			addon.HostingConfigKey:     v.HostingConfigSpec,
			addon.HostingConfigHashKey: v.HostingConfigHash,
			addon.HostingConfigRefKey:  v.HostingConfigSource,
		},
	}
	if len(v.CredentialProblems) > 0 {
		problems, err := json.Marshal(v.CredentialProblems)
		if err != nil {
			return nil, err
		}
		hostingConfig.Data[addon.CredentialProblemsKey] = string(problems)
	}
	return append(out, hostingConfig), nil
}

func applyPodValues(spec *corev1.PodSpec, id string, v AgentValues) {
	spec.NodeSelector = v.NodeSelector
	spec.Tolerations = v.Tolerations
	for i := range spec.Containers {
		c := &spec.Containers[i]
		c.Image = v.Image
		if v.ImagePullPolicy != "" {
			c.ImagePullPolicy = v.ImagePullPolicy
		}
		for j, a := range c.Args {
			switch {
			case strings.HasPrefix(a, "--cluster-name="):
				c.Args[j] = "--cluster-name=" + v.ClusterName
			case strings.HasPrefix(a, "--addon-namespace="):
				c.Args[j] = "--addon-namespace=" + v.InstallNamespace
			}
		}
		c.Env = append(c.Env, v.ProxyEnv...)
		// The last matching entry wins, as in addon-framework's templates.
		for _, r := range v.Resources {
			if re, err := regexp.Compile(r.ContainerIDRegex); err == nil && re.MatchString(id+":"+c.Name) {
				c.Resources = r.Resources
			}
		}
	}
}
