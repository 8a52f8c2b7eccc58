package acms_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"acmscontext.dev/go/acms"
	"acmscontext.dev/go/acms/acmsv1"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// The tests below call a live server: ACMS_URL (e.g. http://127.0.0.1:50051) with ACMS_API_KEY, a key with
// write access to the projects of ACMS_NAMESPACE (default "local"). They create two fresh projects there,
// so runs never meet each other's data. Without ACMS_URL they skip; with it, a missing key fails them.

// world is what the live tests seeded: two projects, one resource each, and a scope over each project.
type world struct {
	url, key             string
	projectA, projectB   string
	resourceA, resourceB string
	scopeA, scopeB       string
}

var (
	seedOnce sync.Once
	seeded   *world
	seedErr  error
)

// live returns the seeded world, seeding it on first use, or skips the test when ACMS_URL is unset.
func live(t *testing.T) *world {
	t.Helper()
	url := os.Getenv("ACMS_URL")
	if url == "" {
		t.Skip("ACMS_URL is not set: these tests need a live server (see clients/go/README.md)")
	}
	seedOnce.Do(func() { seeded, seedErr = seed(url) })
	if seedErr != nil {
		t.Fatalf("seeding the live server at %s: %v", url, seedErr)
	}
	return seeded
}

func seed(url string) (*world, error) {
	w := &world{url: url, key: os.Getenv("ACMS_API_KEY")}
	if w.key == "" {
		return nil, errors.New("ACMS_URL is set but ACMS_API_KEY is not")
	}
	ns := os.Getenv("ACMS_NAMESPACE")
	if ns == "" {
		ns = "local"
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	w.projectA = ns + "/gosdk-" + hex.EncodeToString(suffix) + "-a"
	w.projectB = ns + "/gosdk-" + hex.EncodeToString(suffix) + "-b"

	c, err := acms.New(url, acms.WithAPIKey(w.key))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx := context.Background()
	docs := map[string][]*acmsv1.DocumentInput{
		w.projectA: {
			{Path: "onboarding.md", Content: "# Onboarding\n\nNew engineers start with the onboarding checklist and a buddy."},
			{Path: "deploy.md", Content: "# Deploying\n\nDeploys run from the release pipeline after review."},
		},
		w.projectB: {
			{Path: "incident.md", Content: "# Incidents\n\nThe incident checklist names an on-call lead first."},
		},
	}
	for _, p := range []struct {
		project           string
		resource, scopeID *string
	}{{w.projectA, &w.resourceA, &w.scopeA}, {w.projectB, &w.resourceB, &w.scopeB}} {
		if _, err := c.Registry.CreateProject(ctx, &acmsv1.CreateProjectRequest{Name: p.project}); err != nil {
			return nil, err
		}
		reg, err := c.Registry.RegisterResource(ctx, &acmsv1.RegisterResourceRequest{Project: p.project, Alias: "handbook", Kind: "docs"})
		if err != nil {
			return nil, err
		}
		*p.resource = reg.GetResource().GetId()
		// UpsertDocuments is a client stream: the documents go one message each.
		upload, err := c.Index.UpsertDocuments(ctx)
		if err != nil {
			return nil, err
		}
		for _, d := range docs[p.project] {
			if err := upload.Send(&acmsv1.UpsertDocumentsRequest{ResourceId: *p.resource, Documents: []*acmsv1.DocumentInput{d}}); err != nil {
				return nil, err
			}
		}
		if _, err := upload.CloseAndRecv(); err != nil {
			return nil, err
		}
		resolved, err := c.Scope.ResolveScope(ctx, &acmsv1.ResolveScopeRequest{Projects: []string{p.project}})
		if err != nil {
			return nil, err
		}
		*p.scopeID = resolved.GetScope().GetScopeId()
	}
	return w, nil
}

// client returns a Client of the live server made with opts (after the world's key), closed with the test.
func (w *world) client(t *testing.T, opts ...acms.Option) *acms.Client {
	t.Helper()
	c, err := acms.New(w.url, append([]acms.Option{acms.WithAPIKey(w.key)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func paths(results []*acmsv1.TextResult) []string {
	out := make([]string, len(results))
	for i, r := range results {
		out[i] = r.GetPath()
	}
	return out
}

func TestLiveHealthNeedsNoKey(t *testing.T) {
	w := live(t)
	c, err := acms.New(w.url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Health.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v, %v", res, err)
	}
}

func TestLiveResolveScope(t *testing.T) {
	w := live(t)
	c := w.client(t)
	ctx := context.Background()
	resolved, err := c.Scope.ResolveScope(ctx, &acmsv1.ResolveScopeRequest{Projects: []string{w.projectA, w.projectB}, ExcludeResources: []string{w.projectB + ":handbook"}})
	if err != nil {
		t.Fatal(err)
	}
	scope := resolved.GetScope()
	if !slices.Equal(scope.GetResourceIds(), []string{w.resourceA}) {
		t.Errorf("resource ids %v, want [%s] (the other project's handbook excluded)", scope.GetResourceIds(), w.resourceA)
	}
	got, err := c.Scope.GetScope(ctx, &acmsv1.GetScopeRequest{ScopeId: scope.GetScopeId()})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetScope().GetScopeId() != scope.GetScopeId() || !slices.Equal(got.GetScope().GetResourceIds(), []string{w.resourceA}) {
		t.Errorf("GetScope answered %v, want the scope just resolved", got.GetScope())
	}
	projects := slices.Sorted(slices.Values(got.GetScope().GetProjectNames()))
	if !slices.Equal(projects, []string{w.projectA, w.projectB}) {
		t.Errorf("project names %v", projects)
	}
}

func TestLiveTextSearch(t *testing.T) {
	w := live(t)
	c := w.client(t, acms.WithDefaultScope(w.scopeA))
	ctx := context.Background()
	found, err := c.Text.Search(ctx, &acmsv1.SearchRequest{Query: "onboarding checklist", MaxResults: new(int32(5))})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(found.GetResults()); !slices.Equal(got, []string{"onboarding.md"}) {
		t.Fatalf("paths %v, want [onboarding.md]", got)
	}
	top := found.GetResults()[0]
	if top.GetResourceId() != w.resourceA || !strings.HasPrefix(top.GetUkoUri(), "uko://"+w.resourceA+"/onboarding.md") || top.GetScore() <= 0 || top.GetScore() > 1 {
		t.Errorf("top result %v", top)
	}
	if found.GetScopeId() != w.scopeA {
		t.Errorf("scope_id %q, want %q", found.GetScopeId(), w.scopeA)
	}

	// The streamed variant: one result per message, the same ranking, then io.EOF.
	stream, err := c.Text.SearchStream(ctx, &acmsv1.SearchStreamRequest{Query: "onboarding checklist"})
	if err != nil {
		t.Fatal(err)
	}
	var streamed []string
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		streamed = append(streamed, msg.GetResult().GetPath())
	}
	if !slices.Equal(streamed, []string{"onboarding.md"}) {
		t.Errorf("streamed %v", streamed)
	}
}

func TestLivePerCallScope(t *testing.T) {
	w := live(t)
	c := w.client(t, acms.WithDefaultScope(w.scopeA))
	ctx := context.Background()
	search := func(ctx context.Context) ([]string, error) {
		found, err := c.Text.Search(ctx, &acmsv1.SearchRequest{Query: "checklist"})
		return paths(found.GetResults()), err
	}
	if got, err := search(ctx); err != nil || !slices.Equal(got, []string{"onboarding.md"}) {
		t.Errorf("under the default scope: %v, %v; want [onboarding.md]", got, err)
	}
	if got, err := search(acms.ContextWithScope(ctx, w.scopeB)); err != nil || !slices.Equal(got, []string{"incident.md"}) {
		t.Errorf("under the per-call scope: %v, %v; want [incident.md]", got, err)
	}
	if _, err := search(acms.ContextWithScope(ctx, "")); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("with the scope removed for the call: %v, want FailedPrecondition", err)
	}
}

func TestLivePerCallKey(t *testing.T) {
	w := live(t)
	ctx := context.Background()
	req := &acmsv1.ResolveScopeRequest{Projects: []string{w.projectA}}
	wrong := w.client(t, acms.WithAPIKey("acms_wrong"))
	if _, err := wrong.Scope.ResolveScope(ctx, req); status.Code(err) != codes.Unauthenticated {
		t.Errorf("with a wrong key: %v, want Unauthenticated", err)
	}
	if _, err := wrong.Scope.ResolveScope(acms.ContextWithAPIKey(ctx, w.key), req); err != nil {
		t.Errorf("with the right key for the call: %v", err)
	}
	right := w.client(t)
	if _, err := right.Scope.ResolveScope(acms.ContextWithAPIKey(ctx, "acms_wrong"), req); status.Code(err) != codes.Unauthenticated {
		t.Errorf("with a wrong key for the call: %v, want Unauthenticated", err)
	}
}

func TestLiveScopeViolation(t *testing.T) {
	w := live(t)
	c := w.client(t, acms.WithDefaultScope(w.scopeA))
	ctx := context.Background()

	_, err := c.Scope.ValidateResourceScope(ctx, &acmsv1.ValidateResourceScopeRequest{RequestedResourceIds: []string{w.resourceB}})
	var sv *acms.ScopeViolationError
	if !errors.As(err, &sv) {
		t.Fatalf("ValidateResourceScope outside the scope: %v, want a ScopeViolationError", err)
	}
	if !slices.Equal(sv.ResourceIDs, []string{w.resourceB}) || !slices.Equal(sv.ScopeProjectNames, []string{w.projectA}) || status.Code(err) != codes.PermissionDenied {
		t.Errorf("resource ids %v, scope projects %v, code %v", sv.ResourceIDs, sv.ScopeProjectNames, status.Code(err))
	}

	_, err = c.Scope.ValidateProjectScope(ctx, &acmsv1.ValidateProjectScopeRequest{RequestedProjects: []string{w.projectB}})
	if !errors.As(err, &sv) || !slices.Equal(sv.ProjectNames, []string{w.projectB}) || !slices.Equal(sv.ScopeProjectNames, []string{w.projectA}) {
		t.Errorf("ValidateProjectScope outside the scope: %v (%+v)", err, sv)
	}

	// Fetching a unit of another project's resource is refused the same way, whether or not it exists.
	_, err = c.Rag.FetchContent(ctx, &acmsv1.FetchContentRequest{UkoUris: []string{"uko://" + w.resourceB + "/incident.md"}})
	if !errors.As(err, &sv) || !slices.Equal(sv.ResourceIDs, []string{w.resourceB}) {
		t.Errorf("FetchContent outside the scope: %v (%+v)", err, sv)
	}

	// The same URI under the other scope, given for this call only, is fetched.
	fetched, err := c.Rag.FetchContent(acms.ContextWithScope(ctx, w.scopeB), &acmsv1.FetchContentRequest{UkoUris: []string{"uko://" + w.resourceB + "/incident.md"}})
	if err != nil || len(fetched.GetItems()) != 1 || !strings.Contains(fetched.GetItems()[0].GetContent(), "on-call lead") {
		t.Errorf("FetchContent under the per-call scope: %v, %v", fetched, err)
	}
}

func TestLiveBadRequest(t *testing.T) {
	w := live(t)
	c := w.client(t, acms.WithDefaultScope(w.scopeA))
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		call  func() error
		field string
	}{
		{"an empty query", func() error { _, err := c.Text.Search(ctx, &acmsv1.SearchRequest{Query: ""}); return err }, "query"},
		{"max_results 0", func() error {
			_, err := c.Text.Search(ctx, &acmsv1.SearchRequest{Query: "checklist", MaxResults: new(int32(0))})
			return err
		}, "max_results"},
		{"an empty query, streamed", func() error {
			stream, err := c.Text.SearchStream(ctx, &acmsv1.SearchStreamRequest{Query: ""})
			if err != nil {
				return err
			}
			_, err = stream.Recv()
			return err
		}, "query"},
	} {
		err := c.call()
		var br *acms.BadRequestError
		if !errors.As(err, &br) {
			t.Errorf("%s: %v, want a BadRequestError", c.name, err)
			continue
		}
		if !slices.Contains(br.Fields(), c.field) || status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: fields %v, code %v; want %q, InvalidArgument", c.name, br.Fields(), status.Code(err), c.field)
		}
	}
}

func TestLiveFragmentRoundTrip(t *testing.T) {
	w := live(t)
	c := w.client(t, acms.WithDefaultScope(w.scopeA))
	ctx := context.Background()
	stored, err := c.Tiers.StoreFragment(ctx, &acmsv1.StoreFragmentRequest{Fragment: &acmsv1.Fragment{
		Content: "Decision: deploys need a second reviewer.", Tier: acmsv1.Tier_TIER_HOT, ProjectName: w.projectA,
	}})
	if err != nil {
		t.Fatal(err)
	}
	id := stored.GetFragment().GetFragmentId()
	recalled, err := c.Tiers.GetForActor(ctx, &acmsv1.GetForActorRequest{Role: acmsv1.Role_ROLE_REVIEWER, IncludeFullContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(recalled.GetFragments()) != 1 || recalled.GetFragments()[0].GetFragmentId() != id || recalled.GetFragments()[0].GetContent() != "Decision: deploys need a second reviewer." {
		t.Errorf("GetForActor answered %v, want the one fragment stored (%s)", recalled.GetFragments(), id)
	}
	// A fragment for a project outside the scope is refused with a ScopeViolation.
	_, err = c.Tiers.StoreFragment(ctx, &acmsv1.StoreFragmentRequest{Fragment: &acmsv1.Fragment{Content: "x", Tier: acmsv1.Tier_TIER_HOT, ProjectName: w.projectB}})
	var sv *acms.ScopeViolationError
	if !errors.As(err, &sv) || !slices.Equal(sv.ProjectNames, []string{w.projectB}) {
		t.Errorf("StoreFragment outside the scope: %v (%+v)", err, sv)
	}
}

func TestLivePagingHelpersWalkEveryPage(t *testing.T) {
	w := live(t)
	c := w.client(t)
	ctx := context.Background()
	var projects []string
	for p, err := range c.AllProjects(ctx, 1) {
		if err != nil {
			t.Fatal(err)
		}
		projects = append(projects, p.GetName())
	}
	if !slices.Contains(projects, w.projectA) || !slices.Contains(projects, w.projectB) || !slices.IsSorted(projects) {
		t.Fatalf("AllProjects = %v, want both seeded projects, sorted", projects)
	}
	reg := c.Registry
	if _, err := reg.LinkResource(ctx, &acmsv1.LinkResourceRequest{Project: w.projectA, ResourceId: w.resourceB, Alias: "borrowed"}); err != nil {
		t.Fatal(err)
	}
	var aliases []string
	for r, err := range c.AllResources(ctx, w.projectA, 1) {
		if err != nil {
			t.Fatal(err)
		}
		aliases = append(aliases, r.GetAlias())
	}
	if !slices.Equal(aliases, []string{"borrowed", "handbook"}) {
		t.Fatalf("AllResources = %v", aliases)
	}
	if _, err := reg.UnlinkResource(ctx, &acmsv1.UnlinkResourceRequest{Project: w.projectA, ResourceId: w.resourceB}); err != nil {
		t.Fatal(err)
	}
	var scopes []string
	for s, err := range c.AllScopes(ctx, 1) {
		if err != nil {
			t.Fatal(err)
		}
		scopes = append(scopes, s.GetScopeId())
	}
	if !slices.Contains(scopes, w.scopeA) || !slices.Contains(scopes, w.scopeB) {
		t.Fatalf("AllScopes = %v, want both seeded scopes", scopes)
	}
	// A refused page ends the walk with its error.
	for _, err := range c.AllResources(ctx, "Bad Name", 0) {
		var bad *acms.BadRequestError
		if !errors.As(err, &bad) || !slices.Equal(bad.Fields(), []string{"project"}) {
			t.Fatalf("err = %v, want a BadRequestError naming project", err)
		}
	}
}
