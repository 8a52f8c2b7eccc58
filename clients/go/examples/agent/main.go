// Command agent is a small ACMS client in Go: it resolves a scope over a project, searches it, and is
// refused when it names a resource outside the scope, reading the refusal as an *acms.ScopeViolationError
// (and a bad request as an *acms.BadRequestError).
//
// It calls ACMS_URL, else http://ACMS_HOST:ACMS_PORT (as the acms CLI does), with ACMS_API_KEY:
//
//	ACMS_URL=http://127.0.0.1:50051 ACMS_API_KEY=... ACMS_PROJECT=local/acms go run . "onboarding checklist"
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"acmscontext.dev/go/acms"
	"acmscontext.dev/go/acms/acmsv1"
	"google.golang.org/grpc/status"
)

// outsideResource is a well-formed resource id that no scope of this agent holds.
const outsideResource = "01ARZ3NDEKTSV4RRFFQ69G5FAV"

func run() error {
	key := os.Getenv("ACMS_API_KEY")
	if key == "" {
		return errors.New("set ACMS_API_KEY")
	}
	url, err := acms.URLFromEnv()
	if err != nil {
		return err
	}
	project := os.Getenv("ACMS_PROJECT")
	if project == "" {
		project = "local/acms"
	}
	query := strings.Join(os.Args[1:], " ")
	if query == "" {
		query = "how do I resolve a scope"
	}

	c, err := acms.New(url, acms.WithAPIKey(key))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	resolved, err := c.Scope.ResolveScope(ctx, &acmsv1.ResolveScopeRequest{Projects: []string{project}})
	if err != nil {
		return err
	}
	scope := resolved.GetScope()
	fmt.Printf("scope %s: %d resources in %s\n", scope.GetScopeId(), len(scope.GetResourceIds()), strings.Join(scope.GetProjectNames(), ", "))
	scoped := acms.ContextWithScope(ctx, scope.GetScopeId())

	found, err := c.Text.Search(scoped, &acmsv1.SearchRequest{Query: query, MaxResults: new(int32(3))})
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(found.GetResults()))
	for _, r := range found.GetResults() {
		paths = append(paths, r.GetPath())
	}
	fmt.Printf("text search: %s\n", strings.Join(paths, ", "))

	_, err = c.Scope.ValidateResourceScope(scoped, &acmsv1.ValidateResourceScopeRequest{RequestedResourceIds: []string{outsideResource}})
	var refused *acms.ScopeViolationError
	if !errors.As(err, &refused) {
		return fmt.Errorf("expected a ScopeViolation, got %v", err)
	}
	fmt.Printf("refused out of scope (%s): %s (scope projects %s)\n", status.Code(err), strings.Join(refused.ResourceIDs, ", "), strings.Join(refused.ScopeProjectNames, ", "))

	_, err = c.Text.Search(scoped, &acmsv1.SearchRequest{Query: ""})
	var bad *acms.BadRequestError
	if !errors.As(err, &bad) {
		return fmt.Errorf("expected a BadRequest, got %v", err)
	}
	fmt.Printf("bad request (%s): fields %s\n", status.Code(err), strings.Join(bad.Fields(), ", "))
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "agent: %v\n", err)
		os.Exit(1)
	}
}
