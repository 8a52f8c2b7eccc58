// Package acms is a Go client of the ACMS context service: typed gRPC clients of every acms.v1 service
// (generated in package acmsv1), the API key and scope headers set on every call, and the service's error
// details as Go errors.
//
// One Client holds one connection; its fields are the generated service clients, so every RPC and message
// of proto/acms/v1 is there as generated. The key and scope given to New apply to every call, and a
// context can override them for one call:
//
//	c, err := acms.New("http://127.0.0.1:50051", acms.WithAPIKey(os.Getenv("ACMS_API_KEY")))
//	if err != nil { ... }
//	defer c.Close()
//	resolved, err := c.Scope.ResolveScope(ctx, &acmsv1.ResolveScopeRequest{Projects: []string{"local/api"}})
//	if err != nil { ... }
//	scoped := acms.ContextWithScope(ctx, resolved.GetScope().GetScopeId())
//	found, err := c.Text.Search(scoped, &acmsv1.SearchRequest{Query: "onboarding checklist"})
//
// A refusal for naming something outside the scope is a *ScopeViolationError, a failed field precondition a
// *BadRequestError; both keep the gRPC status, so status.Code(err) still answers:
//
//	var sv *acms.ScopeViolationError
//	if errors.As(err, &sv) {
//		fmt.Println("not in scope:", sv.ResourceIDs, sv.ProjectNames)
//	}
package acms
