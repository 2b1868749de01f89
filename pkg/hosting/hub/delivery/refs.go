package delivery

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// Kind of a referenced object.
const (
	KindSecret    = "Secret"
	KindConfigMap = "ConfigMap"
)

// refPath is a field of a HostedClusterSpec or NodePoolSpec holding the name
// of a Secret or ConfigMap in the HostedCluster's namespace. "[]" steps into
// every item of a list.
type refPath struct {
	kind string
	path string
}

// hostedClusterRefs are the references HyperShift resolves in the
// HostedCluster's namespace (HostedClusterSpec as of the pinned API).
var hostedClusterRefs = []refPath{
	{KindSecret, "pullSecret.name"},
	{KindSecret, "sshKey.name"},
	{KindSecret, "serviceAccountSigningKey.name"},
	{KindSecret, "auditWebhook.name"},
	{KindSecret, "secretEncryption.aescbc.activeKey.name"},
	{KindSecret, "secretEncryption.aescbc.backupKey.name"},
	{KindSecret, "platform.kubevirt.credentials.infraKubeConfigSecret.name"},
	{KindConfigMap, "additionalTrustBundle.name"},
	{KindConfigMap, "configuration.proxy.trustedCA.name"},
	{KindConfigMap, "configuration.image.additionalTrustedCA.name"},
	{KindSecret, "configuration.apiServer.servingCerts.namedCertificates[].servingCertificate.name"},
	{KindSecret, "configuration.oauth.templates.login.name"},
	{KindSecret, "configuration.oauth.templates.providerSelection.name"},
	{KindSecret, "configuration.oauth.templates.error.name"},
	{KindSecret, "configuration.oauth.identityProviders[].htpasswd.fileData.name"},
	{KindSecret, "configuration.oauth.identityProviders[].openID.clientSecret.name"},
	{KindConfigMap, "configuration.oauth.identityProviders[].openID.ca.name"},
	{KindSecret, "configuration.oauth.identityProviders[].github.clientSecret.name"},
	{KindConfigMap, "configuration.oauth.identityProviders[].github.ca.name"},
	{KindSecret, "configuration.oauth.identityProviders[].gitlab.clientSecret.name"},
	{KindConfigMap, "configuration.oauth.identityProviders[].gitlab.ca.name"},
	{KindSecret, "configuration.oauth.identityProviders[].google.clientSecret.name"},
	{KindSecret, "configuration.oauth.identityProviders[].ldap.bindPassword.name"},
	{KindConfigMap, "configuration.oauth.identityProviders[].ldap.ca.name"},
	{KindConfigMap, "configuration.oauth.identityProviders[].keystone.ca.name"},
	{KindSecret, "configuration.oauth.identityProviders[].keystone.tlsClientCert.name"},
	{KindSecret, "configuration.oauth.identityProviders[].keystone.tlsClientKey.name"},
	{KindConfigMap, "configuration.oauth.identityProviders[].basicAuth.ca.name"},
	{KindSecret, "configuration.oauth.identityProviders[].basicAuth.tlsClientCert.name"},
	{KindSecret, "configuration.oauth.identityProviders[].basicAuth.tlsClientKey.name"},
	{KindConfigMap, "configuration.oauth.identityProviders[].requestHeader.ca.name"},
}

// nodePoolRefs are the references in a NodePoolSpec.
var nodePoolRefs = []refPath{
	{KindConfigMap, "config[].name"},
	{KindConfigMap, "tuningConfig[].name"},
}

// Reference is one Secret or ConfigMap a HostedClusterDeployment refers to.
type Reference struct {
	Kind string
	Name string
	// Field is where, for messages: spec.hostedCluster.spec.pullSecret.name.
	Field string
}

// copyHashLength is how many hex digits of the SHA-256 of the whole
// (namespace, HostedClusterDeployment, kind, name) tuple end a copy's name:
// 64 bits, so that no two tuples share a name by accident and no tenant can
// find a second tuple that takes another's (the readable part pins all but a
// handful of candidates).
const copyHashLength = 16

// CopyName is the name, in the hosting namespace, of the copy of the
// Secret or ConfigMap (kind) refName that the HostedClusterDeployment
// hcdNamespace/hcdName refers to. It starts with a readable
// "<hcd>-<refName>" (a refName already prefixed "<hcd>-" is not prefixed
// again), cut to fit, and ends with a hash of the whole tuple, so it is
// injective: HCD "a" referring to "b-c" and HCD "a-b" referring to "c", or
// two HCDs of the same name in different hub namespaces sharing a hosting
// namespace, never write over each other's copies. Deterministic, and a
// valid object name (DNS subdomain of at most 253 characters) for valid
// inputs.
func CopyName(hcdNamespace, hcdName, kind, refName string) string {
	// NUL cannot occur in any of the four, so the joined string is
	// unambiguous.
	sum := sha256.Sum256([]byte(hcdNamespace + "\x00" + hcdName + "\x00" + kind + "\x00" + refName))
	suffix := "-" + hex.EncodeToString(sum[:])[:copyHashLength]
	readable := hcdName + "-" + refName
	if strings.HasPrefix(refName, hcdName+"-") {
		readable = refName
	}
	if room := maxNameLength - len(suffix); len(readable) > room {
		readable = strings.TrimRight(readable[:room], "-.")
	}
	return readable + suffix
}

// maxNameLength is the longest object name (a DNS subdomain), as in
// hosting.BoundedName.
const maxNameLength = 253

// walk calls visit for every string at path under obj; visit returns the
// replacement value.
func walk(obj any, path []string, field string, visit func(field, value string) string) any {
	if len(path) == 0 {
		if s, ok := obj.(string); ok && s != "" {
			return visit(field, s)
		}
		return obj
	}
	m, ok := obj.(map[string]any)
	if !ok {
		return obj
	}
	step := path[0]
	if name, ok := strings.CutSuffix(step, "[]"); ok {
		items, ok := m[name].([]any)
		if !ok {
			return obj
		}
		for i := range items {
			items[i] = walk(items[i], path[1:], fmt.Sprintf("%s.%s[%d]", field, name, i), visit)
		}
		return obj
	}
	if child, ok := m[step]; ok {
		m[step] = walk(child, path[1:], field+"."+step, visit)
	}
	return obj
}

// references lists (and, with rename, rewrites in place) the references in
// spec, an unstructured HostedClusterSpec or NodePoolSpec.
func references(spec map[string]any, paths []refPath, field string, rename func(kind, name string) string) []Reference {
	var refs []Reference
	for _, p := range paths {
		walk(spec, strings.Split(p.path, "."), field, func(f, value string) string {
			refs = append(refs, Reference{Kind: p.kind, Name: value, Field: f})
			if rename != nil {
				return rename(p.kind, value)
			}
			return value
		})
	}
	return refs
}

// uniqueRefs drops repeated kind/name pairs, keeping the first field, sorted.
func uniqueRefs(refs []Reference) []Reference {
	seen := map[string]bool{}
	var out []Reference
	for _, r := range refs {
		if k := r.Kind + "/" + r.Name; !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}
