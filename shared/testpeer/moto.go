package testpeer

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// MotoURLEnv names the environment variable holding the base URL of a moto_server that is
// already running (scripts/test.sh starts one for the whole suite and sets it).
const MotoURLEnv = "MOTO_URL"

// motoStartTimeout bounds how long a moto_server of our own may take to accept
// connections (scaled by TEST_TIMEOUT_SCALE). It starts in about a second on an idle
// machine; under a loaded one its Python imports take far longer.
const motoStartTimeout = 90 * time.Second

// Moto returns the base URL ("http://127.0.0.1:PORT") of a real AWS API endpoint
// (moto_server: S3, KMS, Secrets Manager, …; on every machine of this project): the one
// named by MOTO_URL when set, else one started here on a free loopback port, which
// t.Cleanup kills. A moto_server that does not accept connections in time fails the test
// with its output. Missing moto_server: skip, or fail with REQUIRE_PEERS=1. Tests sharing
// one moto_server must use names of their own (buckets, secrets, key aliases).
func Moto(t TB) string {
	t.Helper()
	if u := os.Getenv(MotoURLEnv); u != "" {
		return u
	}
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		if os.Getenv(RequirePeersEnv) == "1" {
			t.Fatalf("moto_server not found (REQUIRE_PEERS=1)")
		}
		t.Skipf("moto_server not found")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testpeer: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	out := &tail{max: 40}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testpeer: moto_server: %v", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-exited })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	timeout := Scaled(motoStartTimeout)
	for deadline := time.Now().Add(timeout); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr
		}
		select {
		case <-exited:
			t.Fatalf("testpeer: moto_server exited before listening (%v); output:\n%s", waitErr, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("testpeer: moto_server did not listen on %s within %s; output:\n%s", addr, timeout, out)
		}
	}
}
