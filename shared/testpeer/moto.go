package testpeer

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Moto starts moto_server (a real AWS API endpoint: S3, KMS, Secrets Manager, …; on every
// machine of this project) on a free loopback port and returns its base URL,
// "http://127.0.0.1:PORT". t.Cleanup kills it. Missing moto_server: skip, or fail with
// REQUIRE_PEERS=1.
func Moto(t TB) string {
	t.Helper()
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		if os.Getenv("REQUIRE_PEERS") == "1" {
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testpeer: moto_server: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("testpeer: moto_server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
