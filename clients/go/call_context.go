package acms

import "context"

type callKey struct{ name string }

var (
	apiKeyKey = callKey{"api-key"}
	scopeKey  = callKey{"scope"}
)

// ContextWithAPIKey returns a context whose calls send key instead of the Client's key.
func ContextWithAPIKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, apiKeyKey, key)
}

// ContextWithScope returns a context whose calls run under scopeID instead of the Client's default scope;
// an empty scopeID sends no scope header.
func ContextWithScope(ctx context.Context, scopeID string) context.Context {
	return context.WithValue(ctx, scopeKey, scopeID)
}

// valueOr returns the string ctx holds under key, or fallback when it holds none.
func valueOr(ctx context.Context, key callKey, fallback string) string {
	if v, ok := ctx.Value(key).(string); ok {
		return v
	}
	return fallback
}
