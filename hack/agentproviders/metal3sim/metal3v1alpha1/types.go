// Package metal3v1alpha1 is a stand-in for the BareMetalHost of
// metal3.io/v1alpha1 (tests only; see metal3sim).
// +kubebuilder:object:generate=false
// +groupName=metal3.io
// +versionName=v1alpha1
package metal3v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BareMetalHostSpec is the stand-in spec.
type BareMetalHostSpec struct {
	// +optional
	BootMACAddress string `json:"bootMACAddress,omitempty"`
}

// +kubebuilder:object:root=true

// BareMetalHost is the stand-in host.
type BareMetalHost struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BareMetalHostSpec `json:"spec,omitempty"`
}
