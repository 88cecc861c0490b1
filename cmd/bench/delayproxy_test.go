package main

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestDelayProxy: every request–response round trip through the proxy takes at least its
// delay more, the bytes arrive intact and in order both ways, and Close ends the copiers.
func TestDelayProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c) // echo
	}()
	const delay = 20 * time.Millisecond
	p, err := startDelayProxy(ln.Addr().String(), delay)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 5)
	for _, msg := range []string{"hello", "world", "again"} {
		t0 := time.Now()
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d < delay {
			t.Errorf("round trip %s, want ≥ %s", d, delay)
		}
		if string(buf) != msg {
			t.Errorf("echo %q, want %q", buf, msg)
		}
	}
	// Pipelined: three writes at once arrive intact and in order.
	for _, msg := range []string{"aaaaa", "bbbbb", "ccccc"} {
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	all := make([]byte, 15)
	if _, err := io.ReadFull(c, all); err != nil {
		t.Fatal(err)
	}
	if string(all) != "aaaaabbbbbccccc" {
		t.Errorf("pipelined echo %q", all)
	}
}
