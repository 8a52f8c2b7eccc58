package acms

import (
	"fmt"

	"acmscontext.dev/go/acms/acmsv1"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Client is one connection to an ACMS server and a client of each of its services. Its methods are safe
// for concurrent use; Close it when done.
type Client struct {
	// Registry creates projects and registers, links and lists resources (keys with write access).
	Registry acmsv1.RegistryServiceClient
	// Index uploads documents and triples and rebuilds indexes (keys with write access).
	Index acmsv1.IndexServiceClient
	// Scope resolves, reads, narrows and validates scopes.
	Scope acmsv1.ScopeServiceClient
	// Text is keyword (BM25) search.
	Text acmsv1.TextBackendServiceClient
	// Vector is similarity search over embeddings.
	Vector acmsv1.VectorBackendServiceClient
	// Graph is SPARQL and triple traversal over the scope's named graphs.
	Graph acmsv1.GraphBackendServiceClient
	// Rag is hybrid (fused) search and fetching units by UKO URI.
	Rag acmsv1.RagServiceClient
	// Tiers stores and recalls agent context fragments in the hot, warm and cold tiers.
	Tiers acmsv1.ContextTierServiceClient
	// Health is the standard gRPC health service (it needs no key).
	Health healthpb.HealthClient

	conn *grpc.ClientConn
}

// New makes a Client of the server at target, without connecting yet (the first call does).
//
// target is a URL, http://host:port (plaintext h2c, as the server listens by default) or https://host:port
// (TLS with the system roots), or any gRPC target (host:port, dns:///host:port, unix:path), which is dialled
// with TLS unless WithInsecure says otherwise. WithTLSConfig, WithInsecure and WithTransportCredentials
// override what the scheme says.
func New(target string, opts ...Option) (*Client, error) {
	var s settings
	for _, o := range opts {
		o(&s)
	}
	t, err := parseTarget(target)
	if err != nil {
		return nil, err
	}
	creds := s.creds
	if creds == nil {
		creds = t.creds
	}
	h := headers{apiKey: s.apiKey, scopeID: s.scopeID}
	dial := append([]grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithChainUnaryInterceptor(h.unary),
		grpc.WithChainStreamInterceptor(h.stream),
	}, s.dialOptions...)
	conn, err := grpc.NewClient(t.address, dial...)
	if err != nil {
		return nil, fmt.Errorf("acms: %w", err)
	}
	return &Client{
		Registry: acmsv1.NewRegistryServiceClient(conn),
		Index:    acmsv1.NewIndexServiceClient(conn),
		Scope:    acmsv1.NewScopeServiceClient(conn),
		Text:     acmsv1.NewTextBackendServiceClient(conn),
		Vector:   acmsv1.NewVectorBackendServiceClient(conn),
		Graph:    acmsv1.NewGraphBackendServiceClient(conn),
		Rag:      acmsv1.NewRagServiceClient(conn),
		Tiers:    acmsv1.NewContextTierServiceClient(conn),
		Health:   healthpb.NewHealthClient(conn),
		conn:     conn,
	}, nil
}

// Conn returns the Client's connection, e.g. for a generated client this package does not name.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection; calls in flight fail with CANCELED.
func (c *Client) Close() error { return c.conn.Close() }
