package testpeer

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// PgBouncerPoolSize is how many server connections the PgBouncer peer keeps per database
// and user: few, so that consecutive transactions of one client land on different server
// connections and any session state or named statement shows up as an error.
const PgBouncerPoolSize = 3

// pgbouncerStartTimeout bounds the wait for PgBouncer's port (scaled).
const pgbouncerStartTimeout = 30 * time.Second

// pgbouncerBin finds Debian's PgBouncer (/usr/sbin is not always on PATH).
func pgbouncerBin() string {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer"
	}
	return ""
}

// PgBouncer starts Debian's PgBouncer (1.18: it tracks no prepared statements) in front of
// the Postgres database at dbURL, in transaction pool mode with PgBouncerPoolSize server
// connections, trusting local clients, on a free 127.0.0.1 port. It returns dbURL with its
// host and port replaced by PgBouncer's. PgBouncer refuses to run as root, so as root it
// runs as the postgres user (`-u postgres`). It is stopped at cleanup; a PgBouncer that does
// not listen fails t with its log. Missing pgbouncer (`make pgbouncer-deps`): skip, or fail
// with REQUIRE_PEERS=1.
func PgBouncer(t TB, dbURL string) string {
	t.Helper()
	bin := pgbouncerBin()
	if bin == "" {
		missingPeer(t, "pgbouncer not installed (make pgbouncer-deps)")
	}
	u, err := url.Parse(dbURL)
	if err != nil || u.Hostname() == "" {
		t.Fatalf("testpeer: pgbouncer: bad database URL")
	}
	dbPort := u.Port()
	if dbPort == "" {
		dbPort = "5432"
	}
	dir, err := os.MkdirTemp("", "agentpack-pgbouncer-")
	if err != nil {
		t.Fatalf("testpeer: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	var args []string
	if os.Getuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("testpeer: pgbouncer as root needs a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatalf("testpeer: %v", err)
		}
		args = append(args, "-u", "postgres")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testpeer: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	userName := u.User.Username()
	if userName == "" {
		userName = "postgres"
	}
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 500
ignore_startup_parameters = extra_float_digits
server_check_delay = 0
`, u.Hostname(), dbPort, port, filepath.Join(dir, "userlist.txt"), PgBouncerPoolSize)
	for name, body := range map[string]string{
		"pgbouncer.ini": ini,
		"userlist.txt":  strconv.Quote(userName) + ` ""` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatalf("testpeer: %v", err)
		}
	}
	cmd := exec.Command(bin, append(args, filepath.Join(dir, "pgbouncer.ini"))...)
	cmd.Dir = "/"
	out := &tail{max: 40}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testpeer: pgbouncer: %v", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-exited })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	timeout := Scaled(pgbouncerStartTimeout)
	for deadline := time.Now().Add(timeout); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("testpeer: pgbouncer exited before listening (%v); output:\n%s", waitErr, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("testpeer: pgbouncer did not listen on %s within %s; output:\n%s", addr, timeout, out)
		}
	}
	pu := *u
	pu.Host = addr
	return pu.String()
}
