// bind-loopback.cjs — a `node --require` preload for the test peers.
//
// This workplace forbids listening on all interfaces, and @modelcontextprotocol/server-everything
// calls `app.listen(PORT)` with no host (which binds 0.0.0.0 / ::). This preload rewrites every
// net.Server#listen (http, https, express, ... all inherit it) so that a missing host, or a
// wildcard host (0.0.0.0, ::, ::0), becomes 127.0.0.1. Unix-socket paths and handles are left
// alone.
//
// Once a server is listening, one line is written to stderr:
//
//   bind-loopback: listening on 127.0.0.1:PORT
//
// so that a parent process can start a peer with PORT=0 and learn the port the OS chose
// (shared/testpeer reads this line).
'use strict';

const net = require('node:net');

const LOOPBACK = '127.0.0.1';
const WILDCARDS = new Set(['', '0.0.0.0', '::', '::0', '[::]', '0:0:0:0:0:0:0:0']);

function fixHost(host) {
  return host === undefined || host === null || WILDCARDS.has(String(host)) ? LOOPBACK : host;
}

function isPortLike(v) {
  return typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v));
}

const originalListen = net.Server.prototype.listen;

net.Server.prototype.listen = function listen(...args) {
  const a0 = args[0];
  if (args.length === 0 || typeof a0 === 'function') {
    // listen() / listen(cb): random port on all interfaces by default.
    args.unshift(0, LOOPBACK);
  } else if (a0 === undefined || a0 === null) {
    // listen(undefined, ...) behaves like a random port.
    args[0] = 0;
    if (typeof args[1] === 'string') args[1] = fixHost(args[1]);
    else args.splice(1, 0, LOOPBACK);
  } else if (isPortLike(a0)) {
    // listen(port[, host][, backlog][, cb])
    if (typeof args[1] === 'string') args[1] = fixHost(args[1]);
    else if (args[1] === undefined || args[1] === null) args[1] = LOOPBACK;
    else args.splice(1, 0, LOOPBACK); // args[1] was backlog or cb
  } else if (typeof a0 === 'object' && a0.path === undefined && a0.fd === undefined &&
             a0._handle === undefined && a0.handle === undefined) {
    // listen(options[, cb]) with a TCP port
    args[0] = Object.assign({}, a0, { host: fixHost(a0.host) });
  }
  // Anything else (a unix socket path string, a handle) is not a TCP bind on all interfaces.

  this.once('listening', () => {
    const addr = this.address();
    if (addr && typeof addr === 'object') {
      process.stderr.write(`bind-loopback: listening on ${addr.address}:${addr.port}\n`);
    }
  });
  return originalListen.apply(this, args);
};
