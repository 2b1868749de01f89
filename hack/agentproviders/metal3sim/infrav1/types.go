// Package infrav1 is a stand-in for the Metal3Machine part of
// infrastructure.cluster.x-k8s.io/v1beta1 (tests only; see metal3sim).
// +kubebuilder:object:generate=false
// +groupName=infrastructure.cluster.x-k8s.io
// +versionName=v1beta1
package infrav1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Image is the image a Metal3Machine provisions its host with.
type Image struct {
	// +optional
	URL string `json:"url,omitempty"`
	// +optional
	Checksum string `json:"checksum,omitempty"`
	// +optional
	DiskFormat string `json:"diskFormat,omitempty"`
}

// Metal3MachineSpec is the stand-in spec.
type Metal3MachineSpec struct {
	// +optional
	ProviderID *string `json:"providerID,omitempty"`
	// +optional
	Image Image `json:"image,omitempty"`
}

// Metal3MachineStatus is the stand-in status.
type Metal3MachineStatus struct {
	// +optional
	Ready bool `json:"ready,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"

// Metal3Machine is the stand-in infrastructure machine.
type Metal3Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Metal3MachineSpec   `json:"spec,omitempty"`
	Status            Metal3MachineStatus `json:"status,omitempty"`
}

// Metal3MachineTemplateResource is the templated machine.
type Metal3MachineTemplateResource struct {
	Spec Metal3MachineSpec `json:"spec"`
}

// Metal3MachineTemplateSpec is the template's spec.
type Metal3MachineTemplateSpec struct {
	Template Metal3MachineTemplateResource `json:"template"`
}

// +kubebuilder:object:root=true
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"

// Metal3MachineTemplate is the stand-in template.
type Metal3MachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Metal3MachineTemplateSpec `json:"spec,omitempty"`
}
