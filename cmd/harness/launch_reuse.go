package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentharness/harness/proxy"
)

// registerRoute registers client on the running harness proxy at base
// (HARNESS_PROXY) through its loopback-only POST /_harness/routes and
// returns the client's base URL there: base followed by the route's
// prefix. The running proxy writes the spill files, so it must be able
// to write to client.Workspace (the same user).
func registerRoute(ctx context.Context, base string, client proxy.Client) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("HARNESS_PROXY=%q: want the running proxy's URL, such as http://127.0.0.1:8080", base)
	}
	base = strings.TrimRight(base, "/")
	body, err := json.Marshal(client)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/_harness/routes", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("HARNESS_PROXY: no harness proxy answers at %s (%w): start one with harness proxy, or unset HARNESS_PROXY", base, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var got struct{ Prefix string }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &got) != nil || !strings.HasPrefix(got.Prefix, "/_harness/") {
		return "", fmt.Errorf("HARNESS_PROXY: %s did not register a route (status %d: %.200s): is it a harness proxy, reached over loopback?", base, resp.StatusCode, b)
	}
	return base + got.Prefix, nil
}
