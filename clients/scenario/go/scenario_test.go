// The Go runner of clients/scenario/scenario.json (the rules are in clients/scenario/README.md; the Python and
// TypeScript runners follow the same ones): each step's call is made with the Go SDK, its answer reduced to a
// plain observation and matched against the step's expectations. It stops at the first step that does not
// answer as expected and prints one line per step run ("ok 5 keyword search", "FAIL 13 ...: reason").
//
// Environment: ACMS_URL (unset: skipped), ACMS_API_KEY (a key that may write ACMS_PROJECT's namespace),
// ACMS_PROJECT (the {project} of this run: a fresh name), ACMS_TRACEPARENT (optional: sent as the W3C
// traceparent of every call, in the call's outgoing gRPC metadata, so the server's spans continue that trace),
// ACMS_SCENARIO (scenario.json's path, for a copy of this file outside the repository; default ../scenario.json).
package scenario_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"acmscontext.dev/go/acms"
	"acmscontext.dev/go/acms/acmsv1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

type step struct {
	Name        string            `json:"name"`
	Call        string            `json:"call"`
	Args        map[string]any    `json:"args"`
	Save        map[string]string `json:"save"`
	Expect      any               `json:"expect"`
	ExpectError *struct {
		Code           string         `json:"code"`
		ScopeViolation map[string]any `json:"scopeViolation"`
	} `json:"expectError"`
}

type scenario struct {
	Variables map[string]string `json:"variables"`
	Steps     []step            `json:"steps"`
}

var variable = regexp.MustCompile(`\{(\w+)\}`)

// substitute replaces every {name} in the strings of v by vars[name].
func substitute(v any, vars map[string]string) any {
	switch x := v.(type) {
	case string:
		return variable.ReplaceAllStringFunc(x, func(m string) string {
			if val, ok := vars[m[1:len(m)-1]]; ok {
				return val
			}
			panic("unknown variable " + m)
		})
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substitute(e, vars)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substitute(e, vars)
		}
		return out
	}
	return v
}

// difference is the first place actual differs from expected (objects: the keys given; lists: same length, in
// order), or "".
func difference(expected, actual any, at string) string {
	switch e := expected.(type) {
	case []any:
		a, ok := actual.([]any)
		if !ok || len(a) != len(e) {
			return fmt.Sprintf("%s: expected %s, got %s", at, show(expected), show(actual))
		}
		for i := range e {
			if d := difference(e[i], a[i], fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
		return ""
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: expected an object, got %s", at, show(actual))
		}
		for k, v := range e {
			if d := difference(v, a[k], at+"."+k); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(expected, actual) {
		return fmt.Sprintf("%s: expected %s, got %s", at, show(expected), show(actual))
	}
	return ""
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// plain turns an observation into what encoding/json decodes (float64 numbers, []any, map[string]any), the
// form the expectations are in.
func plain(v map[string]any) map[string]any {
	b, _ := json.Marshal(v)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// codeName is a gRPC code's canonical name (PERMISSION_DENIED), as scenario.json writes it.
func codeName(err error) string {
	name := status.Code(err).String()
	return strings.ToUpper(regexp.MustCompile(`([a-z])([A-Z])`).ReplaceAllString(name, "${1}_${2}"))
}

func str(v any) string { return v.(string) }

func strs(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

func floats(v any) []float32 {
	var out []float32
	for _, e := range v.([]any) {
		out = append(out, float32(e.(float64)))
	}
	return out
}

func i32(v any) *int32 { return proto.Int32(int32(v.(float64))) }

func tier(t acmsv1.Tier) string { return strings.TrimPrefix(t.String(), "TIER_") }

func call(ctx context.Context, c *acms.Client, s step, a map[string]any) (map[string]any, error) {
	switch s.Call {
	case "createProject":
		r, err := c.Registry.CreateProject(ctx, &acmsv1.CreateProjectRequest{Name: str(a["name"])})
		return map[string]any{"name": r.GetProject().GetName()}, err
	case "registerResource":
		r, err := c.Registry.RegisterResource(ctx, &acmsv1.RegisterResourceRequest{Project: str(a["project"]), Alias: str(a["alias"]), Kind: str(a["kind"])})
		res := r.GetResource()
		return map[string]any{"id": res.GetId(), "alias": res.GetAlias(), "ownerProject": res.GetOwnerProject()}, err
	case "upsertDocuments":
		var docs []*acmsv1.DocumentInput
		for _, d := range a["documents"].([]any) {
			m := d.(map[string]any)
			docs = append(docs, &acmsv1.DocumentInput{
				Path: str(m["path"]), Content: str(m["content"]),
				Chunks: []*acmsv1.ChunkInput{{Text: str(m["content"]), Embedding: floats(m["embedding"])}},
			})
		}
		stream, err := c.Index.UpsertDocuments(ctx)
		if err != nil {
			return nil, err
		}
		if err := stream.Send(&acmsv1.UpsertDocumentsRequest{ResourceId: str(a["resourceId"]), Documents: docs}); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		r, err := stream.CloseAndRecv()
		return map[string]any{"documentsUpserted": r.GetDocumentsUpserted(), "chunksIndexed": r.GetChunksIndexed(), "vectorsIndexed": r.GetVectorsIndexed()}, err
	case "resolveScope":
		r, err := c.Scope.ResolveScope(ctx, &acmsv1.ResolveScopeRequest{Projects: strs(a["projects"])})
		return map[string]any{"scopeId": r.GetScope().GetScopeId(), "projectNames": r.GetScope().GetProjectNames(), "resourceIds": r.GetScope().GetResourceIds()}, err
	case "search":
		r, err := c.Text.Search(ctx, &acmsv1.SearchRequest{Query: str(a["query"]), MaxResults: i32(a["maxResults"])})
		paths := []string{}
		for _, x := range r.GetResults() {
			paths = append(paths, x.GetPath())
		}
		return map[string]any{"paths": paths, "scopeId": r.GetScopeId()}, err
	case "similaritySearch":
		r, err := c.Vector.SimilaritySearch(ctx, &acmsv1.SimilaritySearchRequest{Embedding: floats(a["embedding"]), TopK: i32(a["topK"])})
		paths := []string{}
		for _, x := range r.GetResults() {
			paths = append(paths, x.GetPath())
		}
		return map[string]any{"paths": paths, "scopeId": r.GetScopeId()}, err
	case "hybridSearch":
		r, err := c.Rag.HybridSearch(ctx, &acmsv1.HybridSearchRequest{Query: str(a["query"]), Embedding: floats(a["embedding"]), TopK: i32(a["topK"])})
		paths := []string{}
		for _, x := range r.GetResults() {
			paths = append(paths, x.GetPath())
		}
		return map[string]any{"paths": paths, "scopeId": r.GetScopeId()}, err
	case "searchStream":
		stream, err := c.Text.SearchStream(ctx, &acmsv1.SearchStreamRequest{Query: str(a["query"]), MaxResults: i32(a["maxResults"])})
		if err != nil {
			return nil, err
		}
		paths := []string{}
		for {
			m, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return map[string]any{"paths": paths}, nil
			}
			if err != nil {
				return nil, err
			}
			paths = append(paths, m.GetResult().GetPath())
		}
	case "fetchContent":
		r, err := c.Rag.FetchContent(ctx, &acmsv1.FetchContentRequest{UkoUris: strs(a["ukoUris"])})
		paths := []string{}
		for _, x := range r.GetItems() {
			paths = append(paths, x.GetPath())
		}
		return map[string]any{"paths": paths, "missing": append([]string{}, r.GetMissing()...)}, err
	case "storeFragment":
		r, err := c.Tiers.StoreFragment(ctx, &acmsv1.StoreFragmentRequest{Fragment: &acmsv1.Fragment{Content: str(a["content"]), ProjectName: str(a["projectName"])}})
		return map[string]any{"fragmentId": r.GetFragment().GetFragmentId(), "tier": tier(r.GetFragment().GetTier())}, err
	case "getFragment":
		r, err := c.Tiers.GetFragment(ctx, &acmsv1.GetFragmentRequest{FragmentId: str(a["fragmentId"])})
		f := r.GetFragment()
		return map[string]any{"fragmentId": f.GetFragmentId(), "content": f.GetContent(), "tier": tier(f.GetTier())}, err
	case "deleteFragment":
		r, err := c.Tiers.DeleteFragment(ctx, &acmsv1.DeleteFragmentRequest{FragmentId: str(a["fragmentId"])})
		return map[string]any{"deleted": r.GetDeleted()}, err
	case "deleteResource":
		_, err := c.Registry.DeleteResource(ctx, &acmsv1.DeleteResourceRequest{ResourceId: str(a["resourceId"])})
		return map[string]any{}, err
	}
	return nil, fmt.Errorf("unknown call %s", s.Call)
}

// check is the reason step s did not answer as expected, or "".
func check(s step, vars map[string]string, obs map[string]any, err error) string {
	if s.ExpectError != nil {
		want := s.ExpectError.Code
		if err == nil {
			return "expected " + want + ", got an answer"
		}
		if got := codeName(err); got != want {
			return fmt.Sprintf("expected %s, got %s: %s", want, got, status.Convert(err).Message())
		}
		if s.ExpectError.ScopeViolation != nil {
			var sv *acms.ScopeViolationError
			if !errors.As(err, &sv) {
				return "the refusal carries no ScopeViolation"
			}
			got := plain(map[string]any{"resourceIds": sv.ResourceIDs, "projectNames": sv.ProjectNames, "scopeProjectNames": sv.ScopeProjectNames})
			return difference(substitute(s.ExpectError.ScopeViolation, vars), got, "scopeViolation")
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("%s: %s", codeName(err), status.Convert(err).Message())
	}
	expected := s.Expect
	if expected == nil {
		expected = map[string]any{}
	}
	return difference(substitute(expected, vars), plain(obs), "answer")
}

func TestScenario(t *testing.T) {
	url := os.Getenv("ACMS_URL")
	if url == "" {
		t.Skip("ACMS_URL is not set: the scenario needs a live server (see clients/scenario/README.md)")
	}
	// ACMS_SCENARIO names scenario.json when the runner is copied out of the repository.
	path := os.Getenv("ACMS_SCENARIO")
	if path == "" {
		path = "../scenario.json"
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sc scenario
	if err := json.Unmarshal(raw, &sc); err != nil {
		t.Fatal(err)
	}
	client, err := acms.New(url, acms.WithAPIKey(os.Getenv("ACMS_API_KEY")))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	vars := map[string]string{"project": os.Getenv("ACMS_PROJECT")}
	for k, v := range sc.Variables {
		vars[k] = v
	}
	base := context.Background()
	if tp := os.Getenv("ACMS_TRACEPARENT"); tp != "" {
		base = metadata.AppendToOutgoingContext(base, "traceparent", tp)
	}
	for i, s := range sc.Steps {
		ctx := base
		if scope, ok := vars["scope"]; ok {
			ctx = acms.ContextWithScope(ctx, scope)
		}
		obs, err := call(ctx, client, s, substitute(s.Args, vars).(map[string]any))
		if reason := check(s, vars, obs, err); reason != "" {
			fmt.Printf("FAIL %d %s: %s\n", i+1, s.Name, reason)
			t.Fatalf("step %d (%s): %s", i+1, s.Name, reason)
		}
		for name, field := range s.Save {
			vars[name] = fmt.Sprint(obs[field])
		}
		fmt.Printf("ok %d %s\n", i+1, s.Name)
	}
}
