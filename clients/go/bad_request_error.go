package acms

import "google.golang.org/grpc/status"

// BadRequestError is an INVALID_ARGUMENT answer carrying a google.rpc.BadRequest: a precondition on a request
// field failed (an empty query, max_results <= 0, a bad glob...). Find it with errors.As; status.Code and
// status.FromError still see the gRPC status.
type BadRequestError struct {
	// FieldViolations name each offending field, in the order the server gave them.
	FieldViolations []FieldViolation
	// Status is the call's gRPC status, details included.
	Status *status.Status
}

// A FieldViolation names one request field (a path such as `query` or `fragment.project_name`) and what is
// wrong with it.
type FieldViolation struct {
	Field       string
	Description string
}

// Error reads as grpc-go's status errors do: "rpc error: code = InvalidArgument desc = <message>".
func (e *BadRequestError) Error() string {
	if e.Status == nil {
		return "acms: bad request"
	}
	return e.Status.Err().Error()
}

// GRPCStatus lets status.FromError and status.Code read the error as the status it came from.
func (e *BadRequestError) GRPCStatus() *status.Status { return e.Status }

// Fields returns the names of the offending fields.
func (e *BadRequestError) Fields() []string {
	fields := make([]string, len(e.FieldViolations))
	for i, v := range e.FieldViolations {
		fields[i] = v.Field
	}
	return fields
}
