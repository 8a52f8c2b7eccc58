package acms_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"acmscontext.dev/go/acms"
	"acmscontext.dev/go/acms/acmsv1"
)

func Example() {
	c, err := acms.New("http://127.0.0.1:50051", acms.WithAPIKey("acms_..."))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	resolved, err := c.Scope.ResolveScope(ctx, &acmsv1.ResolveScopeRequest{Projects: []string{"local/api"}})
	if err != nil {
		log.Fatal(err)
	}
	scoped := acms.ContextWithScope(ctx, resolved.GetScope().GetScopeId())
	found, err := c.Text.Search(scoped, &acmsv1.SearchRequest{Query: "onboarding checklist"})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range found.GetResults() {
		fmt.Println(r.GetUkoUri(), r.GetScore())
	}
}

func ExampleScopeViolationError() {
	c, err := acms.New("http://127.0.0.1:50051", acms.WithAPIKey("acms_..."), acms.WithDefaultScope("01J..."))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_, err = c.Scope.ValidateResourceScope(context.Background(), &acmsv1.ValidateResourceScopeRequest{RequestedResourceIds: []string{"01ARZ3NDEKTSV4RRFFQ69G5FAV"}})
	var refused *acms.ScopeViolationError
	if errors.As(err, &refused) {
		fmt.Println("not in scope:", refused.ResourceIDs, "the scope holds", refused.ScopeProjectNames)
	}
}

func ExampleBadRequestError() {
	c, err := acms.New("http://127.0.0.1:50051", acms.WithAPIKey("acms_..."), acms.WithDefaultScope("01J..."))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_, err = c.Text.Search(context.Background(), &acmsv1.SearchRequest{Query: ""})
	var bad *acms.BadRequestError
	if errors.As(err, &bad) {
		for _, v := range bad.FieldViolations {
			fmt.Printf("%s: %s\n", v.Field, v.Description)
		}
	}
}
