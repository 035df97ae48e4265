#!/usr/bin/env node
// A fake Anthropic Messages API for the end-to-end tests: the real Claude Code client talks to
// it instead of the network, and it plays a script of turns.
//
//   node fake-api.mjs --script SCRIPT.json --log REQUESTS.jsonl [--lifetime SECONDS]
//
// Binds 127.0.0.1 on an ephemeral port and prints one line `{"port":N}` on stdout once it
// listens. Ends by itself after --lifetime seconds (default 120); the test stops it earlier by PID.
//
// SCRIPT.json: {"turns":[TURN…], "fallback":"text"}. For each POST /v1/messages the server takes
// the first unused turn (in script order) whose `when` matches the request, and replies with its
// blocks; a request that matches no turn (title generation and other side requests, or a script
// that went off the rails) gets a short text reply (`fallback`). A TURN is
//
//   {"name": "label for the log",
//    "when": {"system": "substring of the system prompt",
//             "first_user": "substring of the first user message",
//             "last_user": "substring of the last user message (tool results included)",
//             "tool": "name of a tool the request offers",
//             "no_tool": "name of a tool the request must NOT offer"},
//    "capture": {"VAR": "regex with one group, searched in what the client sent since the
//                model's last message (tool results, and any reminder the client adds)"},
//    "reply": [{"text": "…"} | {"tool": "Bash", "input": {…}}, …],
//    "hold": true}
//
// Every condition in `when` must hold (an absent `when` matches any request that offers tools).
// `capture` stores a value taken from the matched request; `{{VAR}}` anywhere in a later reply is
// replaced by it (a lock token, say); `{{A+B}}` by the sum of captured numbers. A reply with a tool block ends with stop_reason tool_use,
// otherwise end_turn. A turn with `hold` is logged and never answered: the connection stays open
// (a model that is still thinking) until the client goes away — the test kills it there.
//
// Every request is appended to REQUESTS.jsonl as one line:
//   {"seq","method","url","turn": name|null,"body": parsed JSON body|null,"reply": blocks|null}
// (`reply`: the content blocks the fake answered a /v1/messages request with.)

import http from "node:http";
import fs from "node:fs";

function parseArgs(argv) {
  const args = { lifetime: 120 };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`missing value for ${key}`);
    if (key === "--script") args.script = value;
    else if (key === "--log") args.log = value;
    else if (key === "--lifetime") args.lifetime = Number(value);
    else throw new Error(`unknown argument ${key}`);
  }
  if (!args.script || !args.log) throw new Error("usage: fake-api.mjs --script FILE --log FILE [--lifetime S]");
  return args;
}

const args = parseArgs(process.argv);
const script = JSON.parse(fs.readFileSync(args.script, "utf8"));
const turns = script.turns ?? [];
const used = new Array(turns.length).fill(false);
const vars = {};
const fallback = script.fallback ?? "好的。";
let seq = 0;
let toolIds = 0;
// Message and tool-use ids unique across fakes: a resumed session (`claude -p --resume`) holds
// the ids an earlier fake gave, and the client takes a repeated message id for the same message.
const idPrefix = `${process.pid.toString(36)}${Date.now().toString(36)}`;

setTimeout(() => {
  process.stderr.write(`fake-api: lifetime of ${args.lifetime}s over, exiting\n`);
  process.exit(0);
}, args.lifetime * 1000);

// The text of a content value: a string, or blocks (text, tool_result with nested content).
function textOf(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(textOf).join("\n");
  if (typeof content === "object") {
    if (typeof content.text === "string") return content.text;
    if (content.type === "tool_result") return textOf(content.content);
    if (content.type === "tool_use") return JSON.stringify(content.input ?? {});
  }
  return "";
}

function userMessages(body) {
  return (body.messages ?? []).filter((m) => m.role === "user");
}

// The text of every message after the model's last one.
function sinceAssistant(body) {
  const messages = body.messages ?? [];
  let at = messages.length;
  while (at > 0 && messages[at - 1].role !== "assistant") at -= 1;
  return messages.slice(at).map((m) => textOf(m.content)).join("\n");
}

function matches(when, body) {
  const tools = (body.tools ?? []).map((t) => t.name);
  if (!when) return tools.length > 0;
  const users = userMessages(body);
  const checks = {
    system: () => textOf(body.system).includes(when.system),
    first_user: () => users.length > 0 && textOf(users[0].content).includes(when.first_user),
    last_user: () => users.length > 0 && textOf(users[users.length - 1].content).includes(when.last_user),
    tool: () => tools.includes(when.tool),
    no_tool: () => !tools.includes(when.no_tool),
  };
  for (const [key, value] of Object.entries(when)) {
    const check = checks[key];
    if (!check) throw new Error(`unknown condition ${key}`);
    if (!check(value)) return false;
  }
  return true;
}

function substitute(value) {
  if (typeof value === "string") {
    // `{{a}}` is a captured value; `{{a+b}}` the sum of captured numbers (an Agent result's
    // usage added over the agents of one step).
    return value.replace(/\{\{(\w+(?:\+\w+)*)\}\}/g, (all, expr) => {
      const names = expr.split("+");
      if (!names.every((n) => n in vars)) return all;
      return names.length === 1 ? vars[expr] : String(names.reduce((sum, n) => sum + Number(vars[n]), 0));
    });
  }
  if (Array.isArray(value)) return value.map(substitute);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v)]));
  }
  return value;
}

// Picks the turn for a request and returns [name, content blocks, hold].
function answer(body) {
  for (let i = 0; i < turns.length; i++) {
    if (used[i] || !matches(turns[i].when, body)) continue;
    used[i] = true;
    const turn = turns[i];
    const last = sinceAssistant(body);
    for (const [name, pattern] of Object.entries(turn.capture ?? {})) {
      const m = new RegExp(pattern).exec(last);
      if (m) vars[name] = m[1];
      else process.stderr.write(`fake-api: turn ${turn.name ?? i}: capture ${name} found nothing\n`);
    }
    const blocks = substitute(turn.reply ?? []).map((b) => {
      if (b.tool) {
        toolIds += 1;
        return { type: "tool_use", id: `toolu_e2e_${idPrefix}_${String(toolIds).padStart(4, "0")}`, name: b.tool, input: b.input ?? {} };
      }
      return { type: "text", text: b.text ?? "" };
    });
    return [turn.name ?? `turn-${i}`, blocks, turn.hold === true];
  }
  return [null, [{ type: "text", text: fallback }], false];
}

function usage() {
  return { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

function sse(res, blocks, model) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const send = (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  const id = `msg_e2e_${idPrefix}_${seq}`;
  send("message_start", {
    message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: usage() },
  });
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      send("content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
    } else {
      send("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      const json = JSON.stringify(block.input);
      // Two deltas, as a real stream splits the JSON.
      const cut = Math.floor(json.length / 2);
      send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: json.slice(0, cut) } });
      send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: json.slice(cut) } });
    }
    send("content_block_stop", { index });
  });
  const stop = blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn";
  send("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } });
  send("message_stop", {});
  res.end();
}

function plain(res, blocks, model) {
  const stop = blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn";
  const message = { id: `msg_e2e_${idPrefix}_${seq}`, type: "message", role: "assistant", model, content: blocks, stop_reason: stop, stop_sequence: null, usage: usage() };
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(message));
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    seq += 1;
    const raw = Buffer.concat(chunks).toString("utf8");
    let body = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = null;
    }
    const path = (req.url ?? "").split("?")[0];
    const record = (turn, reply = null) =>
      fs.appendFileSync(args.log, JSON.stringify({ seq, method: req.method, url: req.url, turn, body, reply }) + "\n");
    try {
      if (req.method === "POST" && path === "/v1/messages/count_tokens") {
        record(null);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ input_tokens: 100 }));
      } else if (req.method === "POST" && path === "/v1/messages" && body) {
        const [name, blocks, hold] = answer(body);
        if (hold) {
          record(name);
          return; // never answered
        }
        record(name, blocks);
        const model = body.model ?? "claude-sonnet-4-5";
        if (body.stream) sse(res, blocks, model);
        else plain(res, blocks, model);
      } else {
        record(null);
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: "not here" } }));
      }
    } catch (e) {
      process.stderr.write(`fake-api: ${e.stack}\n`);
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: String(e) } }));
    }
  });
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
});
