package acms

import (
	"acmscontext.dev/go/acms/acmsv1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DecodeError returns err as a *ScopeViolationError or a *BadRequestError when it is a gRPC status carrying
// that detail, and err unchanged otherwise. A Client's calls already return decoded errors: this is for
// calls made on a connection of your own with the acmsv1 clients.
func DecodeError(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *acmsv1.ScopeViolation:
			if st.Code() == codes.PermissionDenied {
				return &ScopeViolationError{
					ResourceIDs:       d.GetResourceIds(),
					ProjectNames:      d.GetProjectNames(),
					ScopeProjectNames: d.GetScopeProjectNames(),
					Reason:            d.GetReason(),
					Status:            st,
				}
			}
		case *errdetails.BadRequest:
			if st.Code() == codes.InvalidArgument {
				e := &BadRequestError{Status: st}
				for _, v := range d.GetFieldViolations() {
					e.FieldViolations = append(e.FieldViolations, FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
				}
				return e
			}
		}
	}
	return err
}
