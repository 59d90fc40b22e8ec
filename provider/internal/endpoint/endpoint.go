// Package endpoint resolves where a provider's API lives, the same way for
// every provider: the option, else the provider's environment variable,
// else its public default.
package endpoint

import (
	"fmt"
	"strings"
)

// BaseURL returns the API root to use: given, else fromEnv (trimmed), else
// def. It must be an http:// or https:// URL; it is returned with a
// trailing slash, because the SDKs resolve request paths relative to it.
// provider prefixes the error ("openai", "anthropic").
func BaseURL(provider, given, fromEnv, def string) (string, error) {
	u := given
	if u == "" {
		u = strings.TrimSpace(fromEnv)
	}
	if u == "" {
		u = def
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return u, fmt.Errorf("%s: base URL %q: want an http:// or https:// URL", provider, u)
	}
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u, nil
}
