package acms_test

import (
	"testing"

	"acmscontext.dev/go/acms"
)

func TestURLFromEnv(t *testing.T) {
	for _, c := range []struct {
		url, host, port, want string
	}{
		{"", "", "", "http://127.0.0.1:50051"},
		{"http://acms.internal:9000/", "10.0.0.1", "1", "http://acms.internal:9000"},
		{"", "0.0.0.0", "6000", "http://127.0.0.1:6000"},
		{"", "::", "", "http://[::1]:50051"},
		{"", "fe80::1", "7000", "http://[fe80::1]:7000"},
		{"", "acms.internal", " 8080 ", "http://acms.internal:8080"},
	} {
		t.Setenv("ACMS_URL", c.url)
		t.Setenv("ACMS_HOST", c.host)
		t.Setenv("ACMS_PORT", c.port)
		got, err := acms.URLFromEnv()
		if err != nil || got != c.want {
			t.Errorf("URLFromEnv() with ACMS_URL=%q ACMS_HOST=%q ACMS_PORT=%q = %q, %v; want %q", c.url, c.host, c.port, got, err, c.want)
		}
	}
	t.Setenv("ACMS_URL", "")
	for _, port := range []string{"0", "65536", "+80", "http", "123456"} {
		t.Setenv("ACMS_PORT", port)
		if got, err := acms.URLFromEnv(); err == nil {
			t.Errorf("ACMS_PORT=%q gave %q, want an error", port, got)
		}
	}
}
