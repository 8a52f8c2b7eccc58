package acms

import (
	"context"
	"iter"

	"acmscontext.dev/go/acms/acmsv1"
)

// pages yields every row of a paged listing: page is called with each next_page_token (the first call with
// ""), until the server answers an empty one. An error is yielded once, as the last element.
func pages[T any](ctx context.Context, page func(ctx context.Context, token string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		token := ""
		for {
			rows, next, err := page(ctx, token)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, r := range rows {
				if !yield(r, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			token = next
		}
	}
}

// pageSize is the request's page_size: nil (the server's default, 100) when size is 0 or less.
func pageSize(size int32) *int32 {
	if size <= 0 {
		return nil
	}
	return &size
}

// AllProjects yields every project the key may see, by name, following ListProjects' page tokens;
// size is the page size asked for (0: the server's default).
//
//	for p, err := range c.AllProjects(ctx, 0) { if err != nil { return err }; fmt.Println(p.GetName()) }
func (c *Client) AllProjects(ctx context.Context, size int32) iter.Seq2[*acmsv1.Project, error] {
	return pages(ctx, func(ctx context.Context, token string) ([]*acmsv1.Project, string, error) {
		res, err := c.Registry.ListProjects(ctx, &acmsv1.ListProjectsRequest{PageSize: pageSize(size), PageToken: token})
		return res.GetProjects(), res.GetNextPageToken(), err
	})
}

// AllResources yields every resource linked into project, by alias there, following ListResources' page tokens.
func (c *Client) AllResources(ctx context.Context, project string, size int32) iter.Seq2[*acmsv1.Resource, error] {
	return pages(ctx, func(ctx context.Context, token string) ([]*acmsv1.Resource, string, error) {
		res, err := c.Registry.ListResources(ctx, &acmsv1.ListResourcesRequest{Project: project, PageSize: pageSize(size), PageToken: token})
		return res.GetResources(), res.GetNextPageToken(), err
	})
}

// AllScopes yields every scope the key resolved or narrowed, newest first, following ListScopes' page tokens.
func (c *Client) AllScopes(ctx context.Context, size int32) iter.Seq2[*acmsv1.ResourceScope, error] {
	return pages(ctx, func(ctx context.Context, token string) ([]*acmsv1.ResourceScope, string, error) {
		res, err := c.Scope.ListScopes(ctx, &acmsv1.ListScopesRequest{PageSize: pageSize(size), PageToken: token})
		return res.GetScopes(), res.GetNextPageToken(), err
	})
}
