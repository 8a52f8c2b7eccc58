package acms_test

import (
	"errors"
	"io"
	"testing"

	"acmscontext.dev/go/acms"
	"acmscontext.dev/go/acms/acmsv1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
)

func statusWith(t *testing.T, code codes.Code, msg string, detail protoadapt.MessageV1) error {
	t.Helper()
	st, err := status.New(code, msg).WithDetails(detail)
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

func TestDecodeErrorScopeViolation(t *testing.T) {
	err := acms.DecodeError(statusWith(t, codes.PermissionDenied, "Resources not in scope: r1", &acmsv1.ScopeViolation{
		ResourceIds: []string{"r1"}, ProjectNames: []string{"local/b"}, ScopeProjectNames: []string{"local/a"}, Reason: "not in scope",
	}))
	var sv *acms.ScopeViolationError
	if !errors.As(err, &sv) {
		t.Fatalf("errors.As found no ScopeViolationError in %v", err)
	}
	if got := [3][]string{sv.ResourceIDs, sv.ProjectNames, sv.ScopeProjectNames}; got[0][0] != "r1" || got[1][0] != "local/b" || got[2][0] != "local/a" || sv.Reason != "not in scope" {
		t.Errorf("fields: %+v", sv)
	}
	if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != "Resources not in scope: r1" {
		t.Errorf("the status is lost: %v", status.Convert(err))
	}
	if err.Error() != "rpc error: code = PermissionDenied desc = Resources not in scope: r1" {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestDecodeErrorBadRequest(t *testing.T) {
	err := acms.DecodeError(statusWith(t, codes.InvalidArgument, "query must not be empty", &errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "query", Description: "must not be empty"}, {Field: "max_results", Description: "must be > 0"}},
	}))
	var br *acms.BadRequestError
	if !errors.As(err, &br) {
		t.Fatalf("errors.As found no BadRequestError in %v", err)
	}
	want := []acms.FieldViolation{{Field: "query", Description: "must not be empty"}, {Field: "max_results", Description: "must be > 0"}}
	if len(br.FieldViolations) != 2 || br.FieldViolations[0] != want[0] || br.FieldViolations[1] != want[1] {
		t.Errorf("FieldViolations = %+v", br.FieldViolations)
	}
	if f := br.Fields(); len(f) != 2 || f[0] != "query" || f[1] != "max_results" {
		t.Errorf("Fields() = %v", f)
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("code %v", status.Code(err))
	}
}

func TestDecodeErrorLeavesOthersAlone(t *testing.T) {
	plain := status.Error(codes.Unauthenticated, "unknown API key")
	// A detail under a code it does not belong to is not reinterpreted.
	mismatched := statusWith(t, codes.Internal, "oops", &acmsv1.ScopeViolation{ResourceIds: []string{"r1"}})
	for _, err := range []error{nil, io.EOF, plain, mismatched} {
		if got := acms.DecodeError(err); got != err {
			t.Errorf("DecodeError(%v) = %v, want it unchanged", err, got)
		}
	}
}
