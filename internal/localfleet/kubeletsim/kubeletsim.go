// Package kubeletsim is the local fleet's stand-in for kubelets: no pods can
// run on these clusters, so for the container images it knows it runs the
// image's program in-process instead, the way a kubelet would run the pod:
//
//   - with the pod's ServiceAccount identity (a real token from the
//     TokenRequest API, handed to the program as --kubeconfig), so the
//     program's RBAC on the cluster is exactly what its manifests grant;
//   - with its Secret and ConfigMap volumes materialized in a directory and
//     kept in sync, as the kubelet syncs mounted secrets (argument values that
//     point into a mount are rewritten to the materialized path);
//   - restarted with back-off when it fails, replaced when the pod template
//     changes (a rollout), stopped when the Deployment goes away;
//   - Jobs run to completion and get Complete or Failed status;
//   - with its pod's network (SetNetwork): the program finds, with
//     DialerFrom, a dialer that resolves cluster Service names from its
//     namespace as its pod's resolver would (clusterdns).
//
// It writes Deployment and Job status the way the kube-controller-manager and
// kubelet together would, so OCM health probes and work feedback see real
// status. Images it does not know are left alone.
//
// Each program's volumes live in a directory per pod under the directory New
// is given, removed when the program stops.
//
// This is test and demo infrastructure (the local fleet and its tests),
// never used by product code.
package kubeletsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// Program is what runs for a container: the in-process equivalent of the
// image's entrypoint. It gets the container's args (with --kubeconfig added
// and mount paths rewritten) and returns when ctx ends (long-running) or when
// its work is done (jobs).
type Program func(ctx context.Context, args []string) error

// Images maps an image repository (the image reference without tag or
// digest) to its program.
type Images map[string]Program

func (im Images) lookup(image string) (Program, bool) {
	p, ok := im[Repository(image)]
	return p, ok
}

// Repository strips the tag or digest from an image reference.
func Repository(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	return image
}

// Kubelet runs the known workloads of one cluster.
type Kubelet struct {
	config *rest.Config
	client kubernetes.Interface
	images Images
	dir    string

	mu      sync.Mutex
	network func(namespace string) DialFunc
	running map[string]*pod // by "kind/namespace/name"
	wg      sync.WaitGroup
	restart chan struct{}
}

// New returns a kubelet stand-in for the cluster behind config (an admin
// config: the kubelet writes status and requests tokens); dir holds the
// materialized volumes and kubeconfigs.
func New(config *rest.Config, images Images, dir string) (*Kubelet, error) {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	return &Kubelet{config: config, client: client, images: images, dir: dir, running: map[string]*pod{}, restart: make(chan struct{}, 1)}, nil
}

// Run watches Deployments and Jobs until ctx ends, then stops every program
// and waits for them.
func (k *Kubelet) Run(ctx context.Context) {
	factory := informers.NewSharedInformerFactory(k.client, 10*time.Minute)
	deployments := factory.Apps().V1().Deployments().Informer()
	jobs := factory.Batch().V1().Jobs().Informer()
	queue := make(chan string, 1024)
	enqueue := func(kind string) cache.ResourceEventHandler {
		key := func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			m, ok := obj.(metav1.Object)
			if !ok {
				return
			}
			select {
			case queue <- kind + "/" + m.GetNamespace() + "/" + m.GetName():
			case <-ctx.Done():
			}
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: key, UpdateFunc: func(_, n any) { key(n) }, DeleteFunc: key}
	}
	_, _ = deployments.AddEventHandler(enqueue("Deployment"))
	_, _ = jobs.AddEventHandler(enqueue("Job"))
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	for {
		select {
		case <-ctx.Done():
			k.stopAll()
			factory.Shutdown()
			return
		case <-k.restart:
			// Like deleting every pod: programs stop and start again.
			k.stopAll()
			for _, obj := range deployments.GetStore().List() {
				d := obj.(*appsv1.Deployment)
				k.syncDeployment(ctx, "Deployment/"+d.Namespace+"/"+d.Name, d)
			}
		case key := <-queue:
			parts := strings.SplitN(key, "/", 3)
			var obj any
			var exists bool
			if parts[0] == "Deployment" {
				obj, exists, _ = deployments.GetStore().GetByKey(parts[1] + "/" + parts[2])
			} else {
				obj, exists, _ = jobs.GetStore().GetByKey(parts[1] + "/" + parts[2])
			}
			if !exists {
				k.stop(key)
				continue
			}
			switch o := obj.(type) {
			case *appsv1.Deployment:
				k.syncDeployment(ctx, key, o)
			case *batchv1.Job:
				k.syncJob(ctx, key, o)
			}
		}
	}
}

// pod is one running program instance.
type pod struct {
	hash   string
	cancel context.CancelFunc
	done   chan struct{}

	// between restarts: the program is in back-off after lastExit (like a
	// container in CrashLoopBackOff, which is not ready). Guarded by
	// Kubelet.mu.
	backingOff bool
	lastExit   string
	// notReady: the container has a readiness probe and its program has
	// not run for restartReadyAfter yet (the kubelet reports a probed
	// container ready only once its probe passes, which a program that
	// fails at start never does). Guarded by Kubelet.mu.
	notReady bool
}

// waitingReady reports whether the pod's probed program has not yet run
// long enough to count ready.
func (k *Kubelet) waitingReady(p *pod) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return p.notReady
}

// notReadyReason and notReadyMessage are what the deployment controller
// writes on a Deployment without its minimum availability.
const (
	notReadyReason  = "MinimumReplicasUnavailable"
	notReadyMessage = "Deployment does not have minimum availability (kubelet stand-in: the readiness probe passes once the program has run for 1s)"
)

// crashLooping returns why the pod's program is not running, if it is in
// back-off after an exit.
func (k *Kubelet) crashLooping(p *pod) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return p.lastExit, p.backingOff
}

func (k *Kubelet) stop(key string) {
	k.mu.Lock()
	p := k.running[key]
	delete(k.running, key)
	k.mu.Unlock()
	if p != nil {
		p.cancel()
		<-p.done
	}
}

func (k *Kubelet) stopAll() {
	k.mu.Lock()
	keys := make([]string, 0, len(k.running))
	for key := range k.running {
		keys = append(keys, key)
	}
	k.mu.Unlock()
	for _, key := range keys {
		k.stop(key)
	}
	k.wg.Wait()
}

func (k *Kubelet) syncDeployment(ctx context.Context, key string, d *appsv1.Deployment) {
	program, container, ok := k.program(d.Spec.Template.Spec)
	if !ok {
		return
	}
	if d.DeletionTimestamp != nil || (d.Spec.Replicas != nil && *d.Spec.Replicas == 0) {
		k.stop(key)
		k.writeDeploymentStatus(ctx, d, false, "ScaledDown", "no replicas requested")
		return
	}
	hash := templateHash(d.Spec.Template)
	k.mu.Lock()
	current := k.running[key]
	k.mu.Unlock()
	if current != nil && current.hash == hash {
		// A sync (e.g. after our own status write) must not report a
		// crash-looping program available.
		if msg, crashing := k.crashLooping(current); crashing {
			k.writeDeploymentStatus(ctx, d, false, "CrashLoopBackOff", msg)
			return
		}
		if k.waitingReady(current) {
			k.writeDeploymentStatus(ctx, d, false, notReadyReason, notReadyMessage)
			return
		}
		k.writeDeploymentStatus(ctx, d, true, "MinimumReplicasAvailable", "the program runs in-process (kubelet stand-in)")
		return
	}
	k.stop(key) // a new template: roll out
	k.start(ctx, key, hash, d.Namespace, d.Name, d.Spec.Template.Spec, container, program, func(ctx context.Context, err error, restarts int) {
		// A long-running program that returns is restarted with back-off,
		// like a crash-looping container.
		if ctx.Err() != nil {
			return
		}
		msg := fmt.Sprintf("program exited (restart %d): %v", restarts, err)
		if latest, gerr := k.client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{}); gerr == nil {
			k.writeDeploymentStatus(ctx, latest, false, "CrashLoopBackOff", msg)
		}
	}, true)
	if container.ReadinessProbe != nil {
		k.writeDeploymentStatus(ctx, d, false, notReadyReason, notReadyMessage)
		return
	}
	k.writeDeploymentStatus(ctx, d, true, "MinimumReplicasAvailable", "the program runs in-process (kubelet stand-in)")
}

func (k *Kubelet) syncJob(ctx context.Context, key string, j *batchv1.Job) {
	program, container, ok := k.program(j.Spec.Template.Spec)
	if !ok || j.DeletionTimestamp != nil {
		k.stop(key)
		return
	}
	if jobFinished(j) {
		return
	}
	k.mu.Lock()
	_, running := k.running[key]
	k.mu.Unlock()
	if running {
		return
	}
	backoffLimit := int32(6)
	if j.Spec.BackoffLimit != nil {
		backoffLimit = *j.Spec.BackoffLimit
	}
	k.start(ctx, key, "", j.Namespace, j.Name, j.Spec.Template.Spec, container, program, func(ctx context.Context, err error, attempts int) {
		if ctx.Err() != nil {
			return
		}
		latest, gerr := k.client.BatchV1().Jobs(j.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
		if gerr != nil {
			return
		}
		k.writeJobStatus(ctx, latest, err, attempts, int32(attempts) > backoffLimit)
	}, false)
}

// program finds the first container with a known image.
func (k *Kubelet) program(spec corev1.PodSpec) (Program, corev1.Container, bool) {
	for _, c := range spec.Containers {
		if p, ok := k.images.lookup(c.Image); ok {
			return p, c, true
		}
	}
	return nil, corev1.Container{}, false
}

// start runs the program in a goroutine. Long-running programs (deployments)
// are restarted after exits with exponential back-off; jobs run until they
// succeed or exhaust retries, each exit reported to onExit.
func (k *Kubelet) start(parent context.Context, key, hash, namespace, name string, spec corev1.PodSpec, container corev1.Container,
	program Program, onExit func(ctx context.Context, err error, attempt int), longRunning bool) {
	ctx, cancel := context.WithCancel(parent)
	// A probed container is ready only once its probe passes: here, once
	// its program has kept running for restartReadyAfter.
	probed := longRunning && container.ReadinessProbe != nil
	p := &pod{hash: hash, cancel: cancel, done: make(chan struct{}), notReady: probed}
	k.mu.Lock()
	k.running[key] = p
	k.mu.Unlock()
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		defer close(p.done)
		podDir := filepath.Join(k.dir, strings.ReplaceAll(key, "/", "_"))
		defer func() { _ = os.RemoveAll(podDir) }()
		backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 8, Cap: 30 * time.Second}
		for attempt := 1; ; attempt++ {
			k.mu.Lock()
			p.backingOff = false
			k.mu.Unlock()
			exited := make(chan struct{})
			if longRunning && (attempt > 1 || probed) {
				go k.readyAfterRestart(ctx, p, namespace, name, exited)
			}
			err := k.runOnce(ctx, podDir, namespace, spec, container, program)
			close(exited)
			if ctx.Err() != nil {
				return
			}
			if !longRunning && err == nil {
				onExit(ctx, nil, attempt)
				k.finish(key, p)
				return
			}
			if err == nil {
				err = errors.New("exited with status 0")
			}
			if longRunning {
				k.mu.Lock()
				p.backingOff, p.lastExit = true, fmt.Sprintf("program exited (restart %d): %v", attempt, err)
				k.mu.Unlock()
			}
			onExit(ctx, err, attempt)
			if !longRunning {
				latest, gerr := k.client.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
				if gerr != nil || jobFinished(latest) {
					k.finish(key, p)
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff.Step()):
			}
		}
	}()
}

// restartReadyAfter is how long a restarted program must keep running
// before its Deployment is available again: the kubelet reports a restarted
// container without a readiness probe ready once it runs, and one with a
// probe once the probe passes (here: the program keeps running this long,
// also at its first start); a program that exits at once stays in back-off
// instead of flapping.
const restartReadyAfter = time.Second

// readyAfterRestart writes the Deployment available again once a restarted
// program has kept running for restartReadyAfter, as the kubelet and the
// deployment controller would after a crash-loop ends; without it the
// Deployment would stay CrashLoopBackOff until its next change.
func (k *Kubelet) readyAfterRestart(ctx context.Context, p *pod, namespace, name string, exited <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-exited:
		return
	case <-time.After(restartReadyAfter):
	}
	k.mu.Lock()
	p.notReady = false
	k.mu.Unlock()
	if d, err := k.client.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
		k.writeDeploymentStatus(ctx, d, true, "MinimumReplicasAvailable", "the program runs in-process (kubelet stand-in)")
	}
}

// finish forgets a program that ended by itself.
func (k *Kubelet) finish(key string, p *pod) {
	k.mu.Lock()
	if k.running[key] == p {
		delete(k.running, key)
	}
	k.mu.Unlock()
}

// runOnce materializes the pod's volumes and identity and runs the program.
func (k *Kubelet) runOnce(ctx context.Context, podDir, namespace string, spec corev1.PodSpec, container corev1.Container, program Program) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := os.MkdirAll(podDir, 0o700); err != nil {
		return err
	}
	mounts, err := k.syncVolumes(ctx, podDir, namespace, spec, container)
	if err != nil {
		return err
	}
	// Keep mounted Secrets and ConfigMaps current, as the kubelet does
	// (credential rotation reaches the program through its files).
	go wait.UntilWithContext(ctx, func(ctx context.Context) { _, _ = k.syncVolumes(ctx, podDir, namespace, spec, container) }, 2*time.Second)

	sa := spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	kubeconfig, err := k.serviceAccountKubeconfig(ctx, podDir, namespace, sa)
	if err != nil {
		return err
	}
	args := append([]string{}, container.Command[min(1, len(container.Command)):]...)
	args = append(args, container.Args...)
	args = expandEnv(args, podEnv(namespace, podName(podDir), container.Env))
	args = rewriteMountPaths(args, mounts)
	args = append(args, "--kubeconfig="+kubeconfig)
	k.mu.Lock()
	network := k.network
	k.mu.Unlock()
	if network != nil {
		ctx = context.WithValue(ctx, dialerKey{}, network(namespace))
	}
	return program(ctx, args)
}

// syncVolumes writes the container's Secret and ConfigMap mounts under podDir
// and returns mountPath → local directory.
func (k *Kubelet) syncVolumes(ctx context.Context, podDir, namespace string, spec corev1.PodSpec, container corev1.Container) (map[string]string, error) {
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	mounts := map[string]string{}
	for _, m := range container.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			continue
		}
		local := filepath.Join(podDir, "volumes", m.Name)
		var data map[string][]byte
		switch {
		case v.Secret != nil:
			s, err := k.client.CoreV1().Secrets(namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) && v.Secret.Optional != nil && *v.Secret.Optional {
					data = nil
				} else {
					return nil, fmt.Errorf("volume %s: secret %s/%s: %w", m.Name, namespace, v.Secret.SecretName, err)
				}
			} else {
				data = s.Data
			}
		case v.ConfigMap != nil:
			cm, err := k.client.CoreV1().ConfigMaps(namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) && v.ConfigMap.Optional != nil && *v.ConfigMap.Optional {
					data = nil
				} else {
					return nil, fmt.Errorf("volume %s: configmap %s/%s: %w", m.Name, namespace, v.ConfigMap.Name, err)
				}
			} else {
				data = map[string][]byte{}
				for key, val := range cm.Data {
					data[key] = []byte(val)
				}
				for key, val := range cm.BinaryData {
					data[key] = val
				}
			}
		default:
			if err := os.MkdirAll(local, 0o700); err != nil { // emptyDir and the like
				return nil, err
			}
			mounts[m.MountPath] = local
			continue
		}
		if err := writeVolume(local, data); err != nil {
			return nil, err
		}
		mounts[m.MountPath] = local
	}
	return mounts, nil
}

// writeVolume writes each key as a file, only when its content changed, and
// removes files whose key is gone.
func writeVolume(dir string, data map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, ok := data[e.Name()]; !ok {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	for key, val := range data {
		path := filepath.Join(dir, key)
		if old, err := os.ReadFile(path); err == nil && string(old) == string(val) {
			continue
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, val, 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	return nil
}

// rewriteMountPaths maps argument values inside a container mount path onto
// the materialized directory (longest mount path first).
func rewriteMountPaths(args []string, mounts map[string]string) []string {
	paths := make([]string, 0, len(mounts))
	for p := range mounts {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		for _, p := range paths {
			if idx := strings.Index(a, p); idx >= 0 && (idx == 0 || a[idx-1] == '=') {
				rest := a[idx+len(p):]
				if rest == "" || strings.HasPrefix(rest, "/") {
					out[i] = a[:idx] + mounts[p] + rest
					break
				}
			}
		}
	}
	return out
}

// serviceAccountKubeconfig writes a kubeconfig authenticating as the
// ServiceAccount with a token from the TokenRequest API.
func (k *Kubelet) serviceAccountKubeconfig(ctx context.Context, podDir, namespace, sa string) (string, error) {
	tr, err := k.client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](7 * 24 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for service account %s/%s: %w", namespace, sa, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: k.config.Host, CertificateAuthorityData: k.config.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "sa", Namespace: namespace}
	cfg.CurrentContext = "sa"
	path := filepath.Join(podDir, "serviceaccount.kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}

func (k *Kubelet) writeDeploymentStatus(ctx context.Context, d *appsv1.Deployment, available bool, reason, message string) {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	ready := int32(0)
	status := corev1.ConditionFalse
	if available {
		ready, status = replicas, corev1.ConditionTrue
	}
	want := appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           replicas, UpdatedReplicas: replicas,
		ReadyReplicas: ready, AvailableReplicas: ready, UnavailableReplicas: replicas - ready,
		Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentAvailable, Status: status, Reason: reason, Message: message,
		}},
	}
	if d.Status.ObservedGeneration == want.ObservedGeneration && d.Status.AvailableReplicas == want.AvailableReplicas &&
		d.Status.Replicas == want.Replicas && len(d.Status.Conditions) == 1 && d.Status.Conditions[0].Status == status &&
		d.Status.Conditions[0].Reason == reason {
		return
	}
	now := metav1.Now()
	want.Conditions[0].LastUpdateTime, want.Conditions[0].LastTransitionTime = now, now
	d = d.DeepCopy()
	d.Status = want
	_, _ = k.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
}

func (k *Kubelet) writeJobStatus(ctx context.Context, j *batchv1.Job, runErr error, attempts int, givenUp bool) {
	j = j.DeepCopy()
	now := metav1.Now()
	if j.Status.StartTime == nil {
		j.Status.StartTime = &now
	}
	switch {
	case runErr == nil:
		j.Status.Succeeded = 1
		j.Status.Failed = int32(attempts - 1)
		j.Status.CompletionTime = &now
		j.Status.Conditions = append(j.Status.Conditions,
			batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods", LastProbeTime: now, LastTransitionTime: now},
			batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods", LastProbeTime: now, LastTransitionTime: now})
	case givenUp:
		j.Status.Failed = int32(attempts)
		msg := fmt.Sprintf("Job has reached the specified backoff limit: %v", runErr)
		j.Status.Conditions = append(j.Status.Conditions,
			batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded, Message: msg, LastProbeTime: now, LastTransitionTime: now},
			batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded, Message: msg, LastProbeTime: now, LastTransitionTime: now})
	default:
		j.Status.Failed = int32(attempts)
	}
	_, _ = k.client.BatchV1().Jobs(j.Namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{})
}

func jobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func templateHash(t corev1.PodTemplateSpec) string {
	data, _ := json.Marshal(t)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// podEnv resolves the container's literal and downward-API environment.
func podEnv(namespace, name string, env []corev1.EnvVar) map[string]string {
	out := map[string]string{}
	for _, e := range env {
		switch {
		case e.ValueFrom == nil:
			out[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			out[e.Name] = namespace
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			out[e.Name] = name
		}
	}
	return out
}

// expandEnv replaces $(VAR) references in arguments, as the kubelet does.
func expandEnv(args []string, env map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for k, v := range env {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		out[i] = a
	}
	return out
}

// podName is a stable stand-in pod name derived from the pod directory.
func podName(podDir string) string {
	base := filepath.Base(podDir)
	if i := strings.LastIndex(base, "_"); i >= 0 {
		base = base[i+1:]
	}
	return base + "-0"
}

// RestartAll stops every running program and starts it again, as deleting
// all pods would.
func (k *Kubelet) RestartAll() {
	select {
	case k.restart <- struct{}{}:
	default:
	}
}
