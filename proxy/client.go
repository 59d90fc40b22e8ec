package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness/spill"
)

// Client is an agent a launcher (harness claude, harness codex, …) runs in
// front of the proxy: what the proxy needs to know, per request, so that
// every cut it makes is one that agent can read back.
type Client struct {
	// Name is the client's short name: claude, codex, gemini or opencode.
	// A request of no known wire format (a model listing, a reachability
	// check) goes to the upstream of the client's provider.
	Name string
	// Workspace is a folder the client reads without asking (its project
	// folder, where it was started): the spill files of its requests go
	// to Workspace/.harness/spill/, and markers name them by absolute path.
	Workspace string
	// ReadTool is the name of the client's own tool that reads a file, as
	// its model calls it (Read, read_file, …); markers tell the model to
	// use it. Empty says "your file tools".
	ReadTool string
}

// routePrefix starts the path of every request on a client's route.
const routePrefix = "/_harness/"

// Route registers c and returns the path prefix of its route (such as
// "/_harness/3f9c…"): point c's base URL at the proxy's address followed
// by the prefix, and the proxy strips it, spills c's results under
// c.Workspace and names c.ReadTool in markers. The prefix is random, so
// another process cannot guess a route into c's folder.
func (p *Proxy) Route(c Client) (string, error) {
	if c.Workspace == "" {
		return "", errors.New("proxy: a client route needs a workspace")
	}
	ws, err := filepath.Abs(c.Workspace)
	if err != nil {
		return "", fmt.Errorf("proxy: client workspace: %w", err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("proxy: client workspace %s is not a folder", ws)
	}
	c.Workspace = ws
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("proxy: %w", err)
	}
	token := hex.EncodeToString(b[:])
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.routes == nil {
		p.routes = map[string]*Client{}
	}
	p.routes[token] = &c
	return routePrefix + token, nil
}

// onRoute strips a client route's prefix from r's path and returns r
// carrying the client in its context; a request on no route is returned
// as it is, and one on an unknown route gets nil.
func (p *Proxy) onRoute(r *http.Request) *http.Request {
	rest, ok := strings.CutPrefix(r.URL.Path, routePrefix)
	if !ok {
		return r
	}
	token, path, _ := strings.Cut(rest, "/")
	p.mu.Lock()
	c := p.routes[token]
	p.mu.Unlock()
	if c == nil {
		return nil
	}
	r = r.WithContext(context.WithValue(r.Context(), clientKey{}, c))
	u := *r.URL
	u.Path, u.RawPath = "/"+path, ""
	r.URL = &u
	return r
}

type clientKey struct{}

// clientOf returns the client a request's context names, or nil.
func clientOf(ctx context.Context) *Client {
	c, _ := ctx.Value(clientKey{}).(*Client)
	return c
}

// workspaceOf is the folder whose .harness/spill/ receives the spill
// files of a request: its client's, else the proxy's.
func (p *Proxy) workspaceOf(ctx context.Context) string {
	if c := clientOf(ctx); c != nil {
		return c.Workspace
	}
	return p.opts.Workspace
}

// spillRootOf is the spill folder of a request (see workspaceOf).
func (p *Proxy) spillRootOf(ctx context.Context) string {
	return filepath.Join(p.workspaceOf(ctx), filepath.FromSlash(spill.Folder))
}
