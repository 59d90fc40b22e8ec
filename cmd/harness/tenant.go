package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// tenantsNeeded reports whether the proxy must keep credentials apart: a
// store shared with other proxies, or a listen address off loopback.
func tenantsNeeded(db, listen string) bool {
	return isDSN(db) || checkLoopback(listen, false) != nil
}

// loadTenantSecret reads the proxy's tenant secret from path, generating
// one (32 random bytes, hex, mode 0600) when the file does not exist. A
// file others can read is refused: whoever has the secret can tell which
// credential a tenant id names.
func loadTenantSecret(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("tenant secret: %w", err)
		}
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("tenant secret: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, err = f.WriteString(hex.EncodeToString(b[:]) + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("tenant secret: writing %s: %w", path, err)
		}
		// Another replica may have written it first: read what holds.
		return loadTenantSecret(path)
	}
	if err != nil {
		return nil, fmt.Errorf("tenant secret: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("tenant secret %s has mode %04o: make it readable by its owner only (chmod 600)", path, fi.Mode().Perm())
	}
	return readSecretFile(path, "tenant secret")
}

// readSecretFile reads a one-line secret (spaces and newlines trimmed),
// refusing an empty one.
func readSecretFile(path, what string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return nil, fmt.Errorf("%s: %s is empty", what, path)
	}
	return []byte(s), nil
}

// listenHost is the host part of a listen address, for messages.
func listenHost(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// tenantFlag registers --tenant, which keeps one proxy tenant's records:
// the commands that read a gateway's store filter by it as its /stats
// does by credential.
func tenantFlag(fs *flag.FlagSet, what string) *string {
	return fs.String("tenant", "", what+" (the X-Harness-Tenant header of its GET /stats)")
}

// ofTenant reports whether conversation id belongs to tenant: the proxy
// prefixes the ids of a tenant's conversations with the tenant and a dash.
func ofTenant(id, tenant string) bool {
	return strings.HasPrefix(id, tenant+"-")
}
