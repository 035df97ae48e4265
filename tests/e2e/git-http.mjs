#!/usr/bin/env node
// A git server over smart HTTP for the end-to-end tests: the real client adds a marketplace from
// an http(s) URL and clones it shallowly, which git's "dumb" HTTP cannot serve, so every request
// goes to `git http-backend` (CGI) for the repositories under ROOT.
//
//   node git-http.mjs --root DIR [--lifetime SECONDS] [--port N]
//
// Binds 127.0.0.1 on port N (default: an ephemeral port) and prints one line `{"port":N}` on stdout once it
// listens; a repository DIR/NAME.git is then http://127.0.0.1:N/NAME.git. Ends by itself after
// --lifetime seconds (default 120); the test stops it earlier by PID. Read only: pushes are
// refused (http.receivepack is off by default for anonymous requests).

import http from "node:http";
import { spawn } from "node:child_process";

const args = { lifetime: 120, port: 0 };
for (let i = 2; i < process.argv.length; i += 2) {
  const [key, value] = [process.argv[i], process.argv[i + 1]];
  if (value === undefined) throw new Error(`missing value for ${key}`);
  if (key === "--root") args.root = value;
  else if (key === "--lifetime") args.lifetime = Number(value);
  else if (key === "--port") args.port = Number(value);
  else throw new Error(`unknown argument ${key}`);
}
if (!args.root) throw new Error("usage: git-http.mjs --root DIR [--lifetime S] [--port N]");

setTimeout(() => {
  process.stderr.write(`git-http: lifetime of ${args.lifetime}s over, exiting\n`);
  process.exit(0);
}, args.lifetime * 1000);

// Splits a CGI response into its header block and body: headers end at the first blank line.
function headerEnd(buffer) {
  const crlf = buffer.indexOf("\r\n\r\n");
  const lf = buffer.indexOf("\n\n");
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return [crlf, 4];
  if (lf >= 0) return [lf, 2];
  return [-1, 0];
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const cgi = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: args.root,
      GIT_HTTP_EXPORT_ALL: "1",
      REQUEST_METHOD: req.method,
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ""),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      CONTENT_LENGTH: req.headers["content-length"] ?? "",
      HTTP_CONTENT_ENCODING: req.headers["content-encoding"] ?? "",
      GIT_PROTOCOL: req.headers["git-protocol"] ?? "",
      REMOTE_ADDR: "127.0.0.1",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  req.pipe(cgi.stdin);
  let head = Buffer.alloc(0);
  let sent = false;
  cgi.stdout.on("data", (chunk) => {
    if (sent) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const [end, sep] = headerEnd(head);
    if (end < 0) return;
    let status = 200;
    const headers = {};
    for (const line of head.subarray(0, end).toString("latin1").split(/\r?\n/)) {
      const colon = line.indexOf(":");
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === "status") status = parseInt(value, 10);
      else headers[name] = value;
    }
    res.writeHead(status, headers);
    res.write(head.subarray(end + sep));
    sent = true;
  });
  cgi.stderr.on("data", (chunk) => process.stderr.write(`git-http: ${chunk}`));
  cgi.on("close", (code) => {
    if (!sent) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.write(`git http-backend exited with ${code}\n`);
    }
    res.end();
  });
  cgi.on("error", (e) => {
    process.stderr.write(`git-http: ${e}\n`);
    if (!sent) res.writeHead(500);
    res.end();
  });
});

server.listen(args.port, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
});
