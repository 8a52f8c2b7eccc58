package acms

import (
	"testing"
)

func TestParseTarget(t *testing.T) {
	for _, c := range []struct {
		raw, address, security string
	}{
		{"http://127.0.0.1:50051", "127.0.0.1:50051", "insecure"},
		{"http://127.0.0.1:50051/", "127.0.0.1:50051", "insecure"},
		{"http://[::1]:8080", "[::1]:8080", "insecure"},
		{"http://acms.internal", "acms.internal:80", "insecure"},
		{"https://acms.example.com", "acms.example.com:443", "tls"},
		{"https://acms.example.com:8443", "acms.example.com:8443", "tls"},
		{"acms.example.com:443", "acms.example.com:443", "tls"},
		{"dns:///acms.example.com:443", "dns:///acms.example.com:443", "tls"},
		{"unix:/run/acms.sock", "unix:/run/acms.sock", "tls"},
	} {
		got, err := parseTarget(c.raw)
		if err != nil {
			t.Errorf("parseTarget(%q): %v", c.raw, err)
			continue
		}
		if got.address != c.address || got.creds.Info().SecurityProtocol != c.security {
			t.Errorf("parseTarget(%q) = %q over %q, want %q over %q", c.raw, got.address, got.creds.Info().SecurityProtocol, c.address, c.security)
		}
	}
	for _, raw := range []string{"", "http://", "http://host:1/prefix", "http://host:1?x=1", "https://user@host:1"} {
		if _, err := parseTarget(raw); err == nil {
			t.Errorf("parseTarget(%q) accepted", raw)
		}
	}
}
