package acms

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// URLFromEnv returns the server URL the acms CLI would call: ACMS_URL, else http://ACMS_HOST:ACMS_PORT
// (defaults 127.0.0.1 and 50051: http://127.0.0.1:50051, the address `acms serve` listens on in the same
// environment). A wildcard listen address (0.0.0.0, ::) is dialled on loopback.
func URLFromEnv() (string, error) {
	if u := strings.TrimSpace(os.Getenv("ACMS_URL")); u != "" {
		return strings.TrimRight(u, "/"), nil
	}
	host := strings.TrimSpace(os.Getenv("ACMS_HOST"))
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::", "[::]":
		host = "[::1]"
	}
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	port := strings.TrimSpace(os.Getenv("ACMS_PORT"))
	if port == "" {
		port = "50051"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strings.Trim(port, "0123456789") != "" {
		return "", fmt.Errorf("acms: ACMS_PORT must be a port number from 1 to 65535 (dialled when ACMS_URL is unset), got %q", port)
	}
	return "http://" + host + ":" + port, nil
}
