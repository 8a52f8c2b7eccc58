package acms

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// The metadata the server reads (API.md, "Headers").
const (
	// HeaderAuthorization carries `Bearer <api-key>` on every call but health.
	HeaderAuthorization = "authorization"
	// HeaderScope carries the scope id of scoped calls (search, graph, RAG, tiers, scope validation).
	HeaderScope = "acms-scope"
)

// headers sets the key and scope of each call on its outgoing metadata, unless the caller set that header
// itself, and turns the errors of the call into this package's typed errors (DecodeError).
type headers struct {
	apiKey  string
	scopeID string
}

func (h headers) outgoing(ctx context.Context) context.Context {
	md, _ := metadata.FromOutgoingContext(ctx)
	var kv []string
	if key := valueOr(ctx, apiKeyKey, h.apiKey); key != "" && len(md.Get(HeaderAuthorization)) == 0 {
		kv = append(kv, HeaderAuthorization, "Bearer "+key)
	}
	if scope := valueOr(ctx, scopeKey, h.scopeID); scope != "" && len(md.Get(HeaderScope)) == 0 {
		kv = append(kv, HeaderScope, scope)
	}
	if len(kv) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

func (h headers) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return DecodeError(invoker(h.outgoing(ctx), method, req, reply, cc, opts...))
}

func (h headers) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(h.outgoing(ctx), desc, cc, method, opts...)
	if err != nil {
		return nil, DecodeError(err)
	}
	return decodingStream{s}, nil
}

// decodingStream is a client stream whose errors are decoded as the unary calls' are (io.EOF stays io.EOF).
type decodingStream struct{ grpc.ClientStream }

func (s decodingStream) SendMsg(m any) error { return DecodeError(s.ClientStream.SendMsg(m)) }
func (s decodingStream) RecvMsg(m any) error { return DecodeError(s.ClientStream.RecvMsg(m)) }
func (s decodingStream) CloseSend() error    { return DecodeError(s.ClientStream.CloseSend()) }

func (s decodingStream) Header() (metadata.MD, error) {
	md, err := s.ClientStream.Header()
	return md, DecodeError(err)
}
