package proxy

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
)

// routesPath is where a launcher registers its client's route on a running
// proxy (see serveRoutes).
const routesPath = routePrefix + "routes"

// serveRoutes registers a client route for a launcher that reuses this
// proxy: a POST of a JSON Client ({"Name", "Workspace", "ReadTool"})
// answered with {"prefix": "/_harness/…"}. Only a loopback peer may
// register, and only with Content-Type application/json and no Origin
// header, so a web page cannot (its cross-origin JSON POST needs a
// preflight this proxy never grants). The workspace must be a folder.
func (p *Proxy) serveRoutes(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		proxyError(w, http.StatusForbidden, "permission_error", "harness proxy: routes are registered from this machine only")
		return
	}
	if r.Method != http.MethodPost || r.Header.Get("Origin") != "" ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		proxyError(w, http.StatusBadRequest, "invalid_request_error", "harness proxy: register a route with a JSON POST")
		return
	}
	var c Client
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&c); err != nil {
		proxyError(w, http.StatusBadRequest, "invalid_request_error", "harness proxy: route: "+err.Error())
		return
	}
	prefix, err := p.Route(c)
	if err != nil {
		proxyError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"prefix": prefix})
}
