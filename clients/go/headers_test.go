package acms

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// sent returns the metadata a call made with ctx through h carries.
func sent(t *testing.T, h headers, ctx context.Context) metadata.MD {
	t.Helper()
	var md metadata.MD
	invoker := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		md, _ = metadata.FromOutgoingContext(ctx)
		return nil
	}
	if err := h.unary(ctx, "/acms.v1.TextBackendService/Search", nil, nil, nil, invoker); err != nil {
		t.Fatal(err)
	}
	return md
}

func TestHeaders(t *testing.T) {
	ctx := context.Background()
	h := headers{apiKey: "k1", scopeID: "S1"}
	for _, c := range []struct {
		name        string
		h           headers
		ctx         context.Context
		auth, scope []string
	}{
		{"the client's key and scope", h, ctx, []string{"Bearer k1"}, []string{"S1"}},
		{"a per-call key", h, ContextWithAPIKey(ctx, "k2"), []string{"Bearer k2"}, []string{"S1"}},
		{"a per-call scope", h, ContextWithScope(ctx, "S2"), []string{"Bearer k1"}, []string{"S2"}},
		{"no scope for this call", h, ContextWithScope(ctx, ""), []string{"Bearer k1"}, nil},
		{"the innermost override", h, ContextWithScope(ContextWithScope(ctx, "S2"), "S3"), []string{"Bearer k1"}, []string{"S3"}},
		{"headers the caller set", h, metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer mine", "acms-scope", "MINE"), []string{"Bearer mine"}, []string{"MINE"}},
		{"nothing configured", headers{}, ctx, nil, nil},
		{"a scope only per call", headers{}, ContextWithScope(ctx, "S2"), nil, []string{"S2"}},
	} {
		md := sent(t, c.h, c.ctx)
		if !slices.Equal(md.Get(HeaderAuthorization), c.auth) || !slices.Equal(md.Get(HeaderScope), c.scope) {
			t.Errorf("%s: authorization %q, acms-scope %q; want %q, %q", c.name, md.Get(HeaderAuthorization), md.Get(HeaderScope), c.auth, c.scope)
		}
	}
}
