package main

// The loopback ports serve binds (PORT, DEMO_UPSTREAM_PORT, OAUTH_DEMO_PORT, IDP_DEMO_PORT),
// and the check-ports command that tries them first.

import (
	"fmt"
	"net"

	"github.com/agentpack/gateway/shared/config"
)

// localPorts are the environment variables of the ports serve binds, with their defaults,
// in the order bindPorts returns their listeners.
// IDP_DEMO_PORT, the demo identity provider's, comes last and only when it runs.
var localPorts = [][2]string{{"PORT", ""}, {"DEMO_UPSTREAM_PORT", "8090"}, {"OAUTH_DEMO_PORT", "8091"}, {"IDP_DEMO_PORT", "8092"}}

// bindPorts listens on 127.0.0.1 at PORT (port), DEMO_UPSTREAM_PORT, OAUTH_DEMO_PORT and,
// with demoIdP, IDP_DEMO_PORT, and returns the listeners in that order; on the first port
// taken it closes the others and says which variable to change.
func bindPorts(port string, demoIdP bool) ([]net.Listener, error) {
	var out []net.Listener
	for i, p := range localPorts {
		if i == 3 && !demoIdP {
			break
		}
		v := env(p[0], p[1])
		if p[0] == "PORT" {
			v = port
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+v)
		if err != nil {
			for _, l := range out {
				_ = l.Close()
			}
			return nil, fmt.Errorf("port %s (%s) is not free: %w (another make run? set %s to a free port)", v, p[0], err, p[0])
		}
		out = append(out, ln)
	}
	return out, nil
}

// cmdCheckPorts is `local check-ports`: bindPorts, then release them (scripts/run.sh runs
// it before migrating and seeding).
func cmdCheckPorts() error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	lns, err := bindPorts(cfg.Port, cfg.Identity.Issuer == "" && !cfg.Deployed())
	for _, l := range lns {
		_ = l.Close()
	}
	return err
}
