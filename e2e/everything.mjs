// Starts @modelcontextprotocol/server-everything (2025-11-25: sessions, SSE
// answers) in streamableHttp mode on 127.0.0.1 only.
//
//   node everything.mjs [--port N]      (or PORT=N; 0: ephemeral)
//
// The server binds every interface on its own; net.Server.prototype.listen is
// patched here, before it loads, to force the host to 127.0.0.1. Prints
// `listening on 127.0.0.1:PORT` on stdout once bound (the server prints other
// lines before it).

import net from 'node:net';
import { createRequire } from 'node:module';

const HOST = '127.0.0.1';
const i = process.argv.indexOf('--port');
const port = i >= 0 ? process.argv[i + 1] : (process.env.PORT ?? '0');
// `process.env.PORT || 3001` in the server: "0" is a non-empty string, so an
// ephemeral port works.
process.env.PORT = String(port);

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
    if (args[0] !== null && typeof args[0] === 'object') {
        args[0] = { ...args[0], host: HOST };
    } else if (typeof args[1] === 'string') {
        args[1] = HOST;
    } else {
        args.splice(1, 0, HOST);
    }
    this.once('listening', () => {
        const address = this.address();
        process.stdout.write(`listening on ${address.address}:${address.port}\n`);
    });
    return listen.apply(this, args);
};

const require = createRequire(import.meta.url);
const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
process.argv = [process.argv[0], entry, 'streamableHttp'];
await import(entry);
