// Command agent is a small ACMS client in Go: it resolves a scope over a project, searches it, and is
// refused when it names a resource outside the scope, decoding the acms.v1.ScopeViolation (and, for a bad
// request, the google.rpc.BadRequest) from the gRPC status details.
//
// Built in GOPATH mode with Debian's Go packages (see clients/go/README.md):
//
//	ACMS_URL=http://127.0.0.1:50051 ACMS_API_KEY=... ACMS_PROJECT=local/acms ./agent "onboarding checklist"
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	acmsv1 "acms/clients/go/acms/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// outsideResource is a well-formed resource id that no scope of this agent holds.
const outsideResource = "01ARZ3NDEKTSV4RRFFQ69G5FAV"

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// withHeaders sets the headers the server reads: the key on every call, the scope when there is one.
func withHeaders(ctx context.Context, key, scopeID string) context.Context {
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)
	if scopeID != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "acms-scope", scopeID)
	}
	return ctx
}

// scopeViolation returns the ScopeViolation detail of err, or nil when it carries none.
func scopeViolation(err error) *acmsv1.ScopeViolation {
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	for _, d := range st.Details() {
		if v, ok := d.(*acmsv1.ScopeViolation); ok {
			return v
		}
	}
	return nil
}

// badFields returns the fields named by the BadRequest detail of err.
func badFields(err error) []string {
	var fields []string
	if st, ok := status.FromError(err); ok {
		for _, d := range st.Details() {
			if br, ok := d.(*errdetails.BadRequest); ok {
				for _, v := range br.GetFieldViolations() {
					fields = append(fields, v.GetField())
				}
			}
		}
	}
	return fields
}

func run() error {
	key := os.Getenv("ACMS_API_KEY")
	if key == "" {
		return fmt.Errorf("set ACMS_API_KEY")
	}
	target := strings.TrimPrefix(env("ACMS_URL", "http://127.0.0.1:50051"), "http://")
	project := env("ACMS_PROJECT", "local/acms")
	query := strings.Join(os.Args[1:], " ")
	if query == "" {
		query = "how do I resolve a scope"
	}

	conn, err := grpc.Dial(target, grpc.WithInsecure())
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	scopes := acmsv1.NewScopeServiceClient(conn)
	resolved, err := scopes.ResolveScope(withHeaders(ctx, key, ""), &acmsv1.ResolveScopeRequest{Projects: []string{project}})
	if err != nil {
		return err
	}
	scope := resolved.GetScope()
	fmt.Printf("scope %s: %d resources in %s\n", scope.GetScopeId(), len(scope.GetResourceIds()), strings.Join(scope.GetProjectNames(), ", "))
	scoped := withHeaders(ctx, key, scope.GetScopeId())

	maxResults := int32(3)
	found, err := acmsv1.NewTextBackendServiceClient(conn).Search(scoped, &acmsv1.SearchRequest{Query: query, MaxResults: &maxResults})
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(found.GetResults()))
	for _, r := range found.GetResults() {
		paths = append(paths, r.GetPath())
	}
	fmt.Printf("text search: %s\n", strings.Join(paths, ", "))

	_, err = scopes.ValidateResourceScope(scoped, &acmsv1.ValidateResourceScopeRequest{RequestedResourceIds: []string{outsideResource}})
	v := scopeViolation(err)
	if status.Code(err) != codes.PermissionDenied || v == nil {
		return fmt.Errorf("expected a ScopeViolation, got %v", err)
	}
	fmt.Printf("refused out of scope (%s): %s (scope projects %s)\n", status.Code(err), strings.Join(v.GetResourceIds(), ", "), strings.Join(v.GetScopeProjectNames(), ", "))

	_, err = acmsv1.NewTextBackendServiceClient(conn).Search(scoped, &acmsv1.SearchRequest{Query: ""})
	fmt.Printf("bad request (%s): fields %s\n", status.Code(err), strings.Join(badFields(err), ", "))
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "agent: %v\n", err)
		os.Exit(1)
	}
}
