package mcpclient

import (
	"encoding/json"
	"slices"
	"time"
)

// Protocol version by measurement. Which protocol revision an upstream answers fastest is
// the upstream's business: the npm reference server (server-everything) answers a
// tools/call about 1.1 ms slower at 2025-11-25 than at 2025-03-26 on loopback, while its
// ping and tools/list cost the same at both (measured with Pool.Forward, 200 calls per
// version). So the pool measures on the traffic that matters, per connection: the first
// tuneSamples forwarded tools/call requests on the version negotiated at connect, then as
// many on tuneAltVersion (a new session offering it), and keeps the faster. The older
// revision wins only when it is clearly faster (tuneMinGain and tuneMinGainRatio), since a
// newer revision can carry more (icons, structured output) for clients that use it.
// The choice lives in the warm process (Pool) and is reported as Info.ProtocolVersion,
// which a refresh stores on the connection.

const (
	tuneSamples      = 16
	tuneAltVersion   = "2025-03-26"
	tuneMinGain      = 200 * time.Microsecond
	tuneMinGainRatio = 0.2
)

// versionTune is one connection's measurement (guarded by Pool.mu).
type versionTune struct {
	phase   int    // 0: measuring first; 1: measuring alt; 2: decided
	first   string // the version negotiated at connect
	chosen  string
	samples [2][]time.Duration
}

// offer is the version the next connect of this connection should offer ("" = as usual).
func (vt *versionTune) offer() string {
	switch vt.phase {
	case 0:
		return vt.first
	case 1:
		return tuneAltVersion
	}
	return vt.chosen
}

// observeCall records one successful forwarded tools/call of d on session s of connection
// id, and moves the measurement on (dropping s when the next phase needs another session).
func (p *Pool) observeCall(id string, s *session, d time.Duration) {
	if id == "" || s.raw != nil || p.opts.FixedVersion {
		return
	}
	p.mu.Lock()
	e := p.conns[id]
	if e == nil || e.sess != s {
		p.mu.Unlock()
		return
	}
	vt := e.tune
	if vt == nil {
		if s.info.ProtocolVersion <= tuneAltVersion || s.info.ProtocolVersion >= statelessProtocolVersion ||
			declaresTasks(s.info.Capabilities) {
			// Nothing older to try; a stateless upstream (no session to keep); or an
			// upstream running tasks, which 2025-03-26 does not define.
			p.mu.Unlock()
			return
		}
		vt = &versionTune{first: s.info.ProtocolVersion}
		e.tune = vt
	}
	drop := false
	switch vt.phase {
	case 0:
		vt.samples[0] = append(vt.samples[0], d)
		if len(vt.samples[0]) >= tuneSamples {
			vt.phase, drop = 1, true
		}
	case 1:
		if s.info.ProtocolVersion != tuneAltVersion { // the upstream would not speak it
			vt.phase, vt.chosen = 2, vt.first
			break
		}
		vt.samples[1] = append(vt.samples[1], d)
		if len(vt.samples[1]) >= tuneSamples {
			vt.phase, vt.chosen = 2, vt.first
			a, b := median(vt.samples[0]), median(vt.samples[1])
			if altIsBetter(a, b) {
				vt.chosen = tuneAltVersion
			}
			drop = vt.chosen != s.info.ProtocolVersion
			p.log.Info("mcpclient: protocol version chosen by measurement", "connection_id", id,
				"version", vt.chosen, vt.first+"_p50_ms", ms(a), tuneAltVersion+"_p50_ms", ms(b))
		}
	}
	if drop {
		e.sess = nil
	}
	p.mu.Unlock()
	if drop {
		s.retire() // closed once the calls running on it (this one included) end
	}
}

// altIsBetter reports whether the older revision, at median b, is clearly faster than the
// newer at median a: by tuneMinGain and by tuneMinGainRatio of a.
func altIsBetter(a, b time.Duration) bool {
	gain := a - b
	return gain >= tuneMinGain && float64(gain) >= tuneMinGainRatio*float64(a)
}

// declaresTasks reports whether capabilities (the upstream's, as JSON) include tasks.
func declaresTasks(caps json.RawMessage) bool {
	var c struct {
		Tasks json.RawMessage `json:"tasks"`
	}
	return json.Unmarshal(caps, &c) == nil && c.Tasks != nil
}

func median(d []time.Duration) time.Duration {
	c := slices.Clone(d)
	slices.Sort(c)
	return c[len(c)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
