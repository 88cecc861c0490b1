// listen-loopback-sync.cjs — a `node --require` preload for the conformance runner, loaded
// after test/npm/bind-loopback.cjs.
//
// The runner starts each scenario's servers with `app.listen(0)` and reads
// `server.address().port` on the next line, synchronously. bind-loopback.cjs turns a missing
// host into 127.0.0.1, but a listen with a host resolves it first (asynchronously), so
// address() is still null there. This preload keeps `listen(0)` synchronous and on loopback:
// it binds a TCP handle to 127.0.0.1:0 itself and hands the bound handle to listen.
'use strict';

const net = require('node:net');
const { TCP, constants } = process.binding('tcp_wrap');

const previousListen = net.Server.prototype.listen;

net.Server.prototype.listen = function listen(...args) {
  const portOnly = args.length >= 1 && (args[0] === 0 || args[0] === '0') &&
    (args.length === 1 || typeof args[1] === 'function');
  if (!portOnly) return previousListen.apply(this, args);
  const handle = new TCP(constants.SERVER);
  const err = handle.bind('127.0.0.1', 0);
  if (err) throw new Error(`listen-loopback-sync: bind 127.0.0.1:0 failed (${err})`);
  return previousListen.call(this, handle, ...args.slice(1));
};
