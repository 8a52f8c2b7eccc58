package acms

import (
	"fmt"
	"net/url"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// target is where New dials, and the credentials its scheme implies.
type target struct {
	address string
	creds   credentials.TransportCredentials
}

func parseTarget(raw string) (target, error) {
	if !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://") {
		if raw == "" {
			return target{}, fmt.Errorf("acms: empty target")
		}
		return target{address: raw, creds: credentials.NewTLS(nil)}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("acms: target %q: %w", raw, err)
	}
	// gRPC calls go to /<service>/<method> at the root: a URL path cannot be honoured.
	if u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil {
		return target{}, fmt.Errorf("acms: target %q: want http(s)://host:port with no path, query or user", raw)
	}
	address := u.Host
	if u.Port() == "" {
		address += map[string]string{"http": ":80", "https": ":443"}[u.Scheme]
	}
	if u.Scheme == "http" {
		return target{address: address, creds: insecure.NewCredentials()}, nil
	}
	return target{address: address, creds: credentials.NewTLS(nil)}, nil
}
