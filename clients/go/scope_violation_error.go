package acms

import "google.golang.org/grpc/status"

// ScopeViolationError is a PERMISSION_DENIED answer carrying an acms.v1.ScopeViolation: the call named
// resources or projects outside its scope (or outside what the key allows), or the scope's resources are all
// denied. Find it with errors.As; status.Code and status.FromError still see the gRPC status.
type ScopeViolationError struct {
	// ResourceIDs are the offending resource ids, as sent.
	ResourceIDs []string
	// ProjectNames are the offending project names, as sent.
	ProjectNames []string
	// ScopeProjectNames are the projects of the call's scope (for an unscoped call, those the key allows).
	ScopeProjectNames []string
	// Reason says why, for people.
	Reason string
	// Status is the call's gRPC status, details included.
	Status *status.Status
}

// Error reads as grpc-go's status errors do: "rpc error: code = PermissionDenied desc = <message>".
func (e *ScopeViolationError) Error() string {
	if e.Status == nil {
		return "acms: scope violation"
	}
	return e.Status.Err().Error()
}

// GRPCStatus lets status.FromError and status.Code read the error as the status it came from.
func (e *ScopeViolationError) GRPCStatus() *status.Status { return e.Status }
