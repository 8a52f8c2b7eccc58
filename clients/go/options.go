package acms

import (
	"crypto/tls"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// An Option configures a Client made by New.
type Option func(*settings)

type settings struct {
	apiKey      string
	scopeID     string
	creds       credentials.TransportCredentials
	dialOptions []grpc.DialOption
}

// WithAPIKey sets the key sent as `authorization: Bearer <key>` on every call (ContextWithAPIKey overrides
// it for one call).
func WithAPIKey(key string) Option {
	return func(s *settings) { s.apiKey = key }
}

// WithDefaultScope sets the scope id sent as `acms-scope` on every call (ContextWithScope overrides it for
// one call). Calls that take no scope ignore the header.
func WithDefaultScope(scopeID string) Option {
	return func(s *settings) { s.scopeID = scopeID }
}

// WithInsecure dials without TLS (h2c), as an http:// target does. For a server on loopback or behind a
// proxy that terminates TLS: the API key travels in clear otherwise.
func WithInsecure() Option {
	return WithTransportCredentials(insecure.NewCredentials())
}

// WithTLSConfig dials with TLS configured by cfg (nil: the system roots), as an https:// target does.
func WithTLSConfig(cfg *tls.Config) Option {
	return WithTransportCredentials(credentials.NewTLS(cfg))
}

// WithTransportCredentials dials with creds, whatever the target's scheme says.
func WithTransportCredentials(creds credentials.TransportCredentials) Option {
	return func(s *settings) { s.creds = creds }
}

// WithDialOptions adds options to grpc.NewClient, e.g. a stats handler for OpenTelemetry
// (grpc.WithStatsHandler(otelgrpc.NewClientHandler())), which passes the caller's trace context on.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(s *settings) { s.dialOptions = append(s.dialOptions, opts...) }
}
