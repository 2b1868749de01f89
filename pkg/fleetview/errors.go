package fleetview

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// PermissionError is a read the reader's identity may not do, named as RBAC
// names it, so the reader knows which permission to ask for.
type PermissionError struct {
	Verb     string
	Resource string // resource.group
	// Namespace is where the read was; "" for cluster scope.
	Namespace string
	Err       error
}

func (e *PermissionError) Error() string {
	scope := "at the cluster scope"
	if e.Namespace != "" {
		scope = "in namespace " + e.Namespace
	}
	return fmt.Sprintf("missing permission: you may not %s %s %s", e.Verb, e.Resource, scope)
}

func (e *PermissionError) Unwrap() error { return e.Err }

// APIMissingError is a read of a resource the hub does not serve: the CRDs
// (hcp-fleet's or OCM's) are not installed there.
type APIMissingError struct {
	Resource string
	Err      error
}

func (e *APIMissingError) Error() string {
	return fmt.Sprintf("the hub does not serve %s: is hcp-fleet (and open-cluster-management) installed on it, and is this the hub's context? (%v)", e.Resource, e.Err)
}

func (e *APIMissingError) Unwrap() error { return e.Err }

// ReadError names what failed when verb on resource (resource.group) in
// namespace ("" for cluster scope) failed with err: a missing permission or
// a missing API get their own errors; others are wrapped.
func ReadError(err error, verb, resource, namespace string) error {
	var statusErr apierrors.APIStatus
	var named *ReadFailure
	var denied *PermissionError
	var missing *APIMissingError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &named), errors.As(err, &denied), errors.As(err, &missing):
		return err // named already
	case apierrors.IsForbidden(err):
		return &PermissionError{Verb: verb, Resource: resource, Namespace: namespace, Err: err}
	case meta.IsNoMatchError(err),
		// A resource the discovery saw but the server no longer serves.
		errors.As(err, &statusErr) && apierrors.IsNotFound(err) && (statusErr.Status().Details == nil || statusErr.Status().Details.Name == ""):
		return &APIMissingError{Resource: resource, Err: err}
	}
	return &ReadFailure{Verb: verb, Resource: resource, Namespace: namespace, Err: err}
}

// ReadFailure is any other failed read, with what was read.
type ReadFailure struct {
	Verb, Resource, Namespace string
	Err                       error
}

func (e *ReadFailure) Error() string {
	where := ""
	if e.Namespace != "" {
		where = " in namespace " + e.Namespace
	}
	return fmt.Sprintf("%s %s%s: %v", e.Verb, e.Resource, where, e.Err)
}

func (e *ReadFailure) Unwrap() error { return e.Err }
