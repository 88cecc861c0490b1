package gateway

import "unsafe"

// ItemHeads returns, by server key, the address of each cached item's shared first-page
// head (the built-ins' bytes), nil for an item without one (tests).
func ItemHeads(g *Gateway) map[string]*byte {
	out := map[string]*byte{}
	for _, k := range g.servers.keys() {
		if it, ok := g.servers.c.GetIfPresent(k); ok {
			out[k] = unsafe.SliceData(it.head)
		}
	}
	return out
}
