#!/usr/bin/env node
// Loads a `novel dashboard` file from disk in headless Chromium and reports what a browser saw,
// for crates/novel-cli/tests/test_dashboard.rs:
//
//   node dashboard-check.mjs --chromium PATH --file DASHBOARD.html --screenshot OUT.png
//        --profile EMPTY_DIR --checks CHECKS.json [--width PX] [--mobile 1] [--lifetime SECONDS]
//
// Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: fds 3 and
// 4, no port), with a fresh profile directory. The script records every console message, every
// uncaught exception, every browser log entry and every network request of the page; takes a
// full-page screenshot (and one of each section beside it); and evaluates CHECKS.json in the page — {"counts": {NAME: CSS selector},
// "fills": {NAME: CSS selector}} — returning how many elements each count selector matches and
// the computed `fill` of the elements of each fill selector. The window is --width px wide
// (default 1280), a phone's (touch, mobile viewport) with --mobile 1. It also measures, from the
// DOM, what a reader sees of the charts' text:
//
//   - "chart_font": the smallest rendered size (px) of any visible chart text: its computed
//     font size times the scale its SVG is drawn at (getScreenCTM), with the element;
//   - "overlaps": pairs of visible text elements of one chart whose boxes
//     (getBoundingClientRect) intersect by more than half a pixel each way;
//   - "clipped": chart texts whose box reaches outside their chart's box (cut off);
//   - "contrast": every visible text (HTML and SVG) whose colour has under 4.5:1 contrast
//     (3:1 at 18.66 px bold / 24 px and up) against the first opaque background up its
//     ancestors (SVG text: against white, its chart's background), and the lowest ratio found;
//   - "marks": for the CHECKS.json "marks" selectors, the lowest 3:1-relevant contrast of
//     their fill against white.
//
// It prints one JSON document:
//
//   {"console": [...], "exceptions": [...], "log": [...], "requests": [urls], "failed": [urls],
//    "counts": {...}, "fills": {...}, "sections": {id: {"state", "charts": [...], "notes": [...]}},
//    "chart_font": {min, text}, "overlaps": [...], "overlap_count": N, "clipped": [...],
//    "contrast": {min, failures}, "marks": {...}, "print_break_inside": [per section, printed],
//    "font": "...", "load_ms": N, "width": N, "height": N, "screenshot": BYTES}
//
// Chromium is killed by PID when the script ends, and the script ends by itself after
// --lifetime seconds (default 60) whatever happens.

import { spawn } from "node:child_process";
import fs from "node:fs";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
  const args = { lifetime: 60 };
  for (let i = 2; i < argv.length; i += 2) {
    args[argv[i].replace(/^--/, "")] = argv[i + 1];
  }
  for (const k of ["chromium", "file", "screenshot", "profile", "checks"]) {
    if (!args[k]) {
      console.error(`missing --${k}`);
      process.exit(2);
    }
  }
  return args;
}

const args = parseArgs(process.argv);
const checks = JSON.parse(fs.readFileSync(args.checks, "utf8"));
const url = pathToFileURL(args.file).href;

const browser = spawn(
  args.chromium,
  [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--remote-debugging-pipe",
    `--user-data-dir=${args.profile}`,
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--mute-audio",
    "--hide-scrollbars",
    "about:blank",
  ],
  { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
);
let stderr = "";
browser.stderr.on("data", (d) => {
  stderr += d;
});

function finish(code, out) {
  try {
    browser.kill("SIGKILL");
  } catch {}
  if (out !== undefined) process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(code);
}

const timer = setTimeout(() => {
  console.error(`dashboard-check: no answer within ${args.lifetime} s\n${stderr.slice(-2000)}`);
  finish(3);
}, Number(args.lifetime) * 1000);
browser.on("exit", (code, signal) => {
  console.error(`chromium exited early (${code ?? signal})\n${stderr.slice(-2000)}`);
  finish(3);
});
browser.on("error", (e) => {
  console.error(`cannot start chromium: ${e.message}`);
  finish(3);
});

// The protocol: JSON messages ending with a NUL byte, written to fd 3, read from fd 4.
const toBrowser = browser.stdio[3];
const fromBrowser = browser.stdio[4];
let nextId = 1;
const pending = new Map();
const listeners = [];
let buffer = "";
fromBrowser.on("data", (chunk) => {
  buffer += chunk.toString("utf8");
  let end;
  while ((end = buffer.indexOf("\0")) >= 0) {
    const msg = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    if (msg.id && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(JSON.stringify(msg.error)));
      else resolve(msg.result);
    } else if (msg.method) {
      for (const l of listeners) l(msg);
    }
  }
});

function send(method, params = {}, sessionId) {
  const id = nextId++;
  const msg = { id, method, params };
  if (sessionId) msg.sessionId = sessionId;
  toBrowser.write(JSON.stringify(msg) + "\0");
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

const seen = { console: [], exceptions: [], log: [], requests: [], failed: [] };
let loaded;
const loadedPromise = new Promise((r) => (loaded = r));
listeners.push((msg) => {
  const p = msg.params || {};
  switch (msg.method) {
    case "Runtime.consoleAPICalled":
      seen.console.push({
        type: p.type,
        text: (p.args || []).map((a) => a.value ?? a.description ?? "").join(" "),
      });
      break;
    case "Runtime.exceptionThrown":
      seen.exceptions.push(p.exceptionDetails?.exception?.description ?? p.exceptionDetails?.text);
      break;
    case "Log.entryAdded":
      seen.log.push({ level: p.entry.level, source: p.entry.source, text: p.entry.text, url: p.entry.url });
      break;
    case "Network.requestWillBeSent":
      seen.requests.push(p.request.url);
      break;
    case "Network.loadingFailed":
      seen.failed.push(p.errorText);
      break;
    case "Page.loadEventFired":
      loaded();
      break;
  }
});

const PAGE_WIDTH = Number(args.width || 1280);
const MOBILE = args.mobile === "1";

// Evaluated in the page: the text sizes, overlaps and contrasts described at the top.
const MEASURE = `
  function measure(checks) {
    const visible = (e) => {
      const st = getComputedStyle(e);
      if (st.display === "none" || st.visibility === "hidden") return false;
      const r = e.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && !e.closest("details:not([open])");
    };
    const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
    const background = (e) => {
      for (let n = e; n && n.nodeType === 1; n = n.parentElement) {
        if (n.tagName.toLowerCase() === "svg" && n.classList.contains("chart")) return [255, 255, 255];
        const c = rgb(getComputedStyle(n).backgroundColor);
        if (c.length >= 3 && (c.length < 4 || c[3] === 1)) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    let chart_font = { min: Infinity, text: "" };
    const overlaps = [];
    const clipped = [];
    for (const svgEl of document.querySelectorAll("svg.chart")) {
      const boxes = [];
      const frame = svgEl.getBoundingClientRect();
      for (const t of svgEl.querySelectorAll("text")) {
        if (!visible(t) || !t.textContent.trim()) continue;
        const px = parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
        if (px < chart_font.min) chart_font = { min: px, text: t.textContent };
        const r = t.getBoundingClientRect();
        if (r.left < frame.left - 0.5 || r.right > frame.right + 0.5 || r.top < frame.top - 0.5 || r.bottom > frame.bottom + 0.5) {
          clipped.push({ chart: svgEl.dataset.chart, text: t.textContent });
        }
        boxes.push([r, t.textContent]);
      }
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          const [a, at] = boxes[i], [b, bt] = boxes[j];
          const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          if (w > 0.5 && h > 0.5) overlaps.push({ chart: svgEl.dataset.chart, a: at, b: bt });
        }
      }
    }
    const failures = [];
    let min = Infinity;
    const texts = [...document.querySelectorAll("svg.chart text")];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const e = n.parentElement;
      if (!n.textContent.trim() || !e || e.closest("svg") || e.closest("style")) continue;
      texts.push(e);
    }
    for (const e of new Set(texts)) {
      if (!visible(e)) continue;
      const st = getComputedStyle(e);
      const inSvg = !!e.closest("svg");
      const fg = rgb(inSvg ? st.fill : st.color);
      if (fg.length < 3) continue;
      const r = ratio(fg.slice(0, 3), background(e));
      const size = parseFloat(st.fontSize), bold = Number(st.fontWeight) >= 700;
      const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
      min = Math.min(min, r);
      if (r < need) failures.push({ text: e.textContent.slice(0, 40), ratio: Math.round(r * 100) / 100, need });
    }
    const marks = {};
    for (const [k, sel] of Object.entries(checks.marks || {})) {
      const fills = [...document.querySelectorAll(sel)].slice(0, 50).map((e) => rgb(getComputedStyle(e).fill));
      marks[k] = fills.length ? Math.min(...fills.map((f) => ratio(f.slice(0, 3), [255, 255, 255]))) : null;
    }
    return { chart_font, overlaps: overlaps.slice(0, 50), overlap_count: overlaps.length, clipped: clipped.slice(0, 50),
             contrast: { min, failures: failures.slice(0, 50) }, marks };
  }
`;

async function main() {
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  const s = (method, params) => send(method, params, sessionId);
  await s("Page.enable");
  await s("Runtime.enable");
  await s("Log.enable");
  await s("Network.enable");
  await s("Emulation.setDeviceMetricsOverride", {
    width: PAGE_WIDTH,
    height: 900,
    deviceScaleFactor: 1,
    mobile: MOBILE,
  });
  if (MOBILE) await s("Emulation.setTouchEmulationEnabled", { enabled: true, maxTouchPoints: 5 });
  await s("Page.navigate", { url });
  await loadedPromise;
  const expression = `(() => {
    const checks = ${JSON.stringify(checks)};
    const counts = {};
    for (const [k, sel] of Object.entries(checks.counts || {})) counts[k] = document.querySelectorAll(sel).length;
    const fills = {};
    for (const [k, sel] of Object.entries(checks.fills || {})) {
      fills[k] = [...document.querySelectorAll(sel)].slice(0, 200).map((e) => getComputedStyle(e).fill);
    }
    const sections = {};
    for (const sec of document.querySelectorAll("section")) {
      sections[sec.id] = {
        state: sec.dataset.state,
        charts: [...sec.querySelectorAll("svg.chart")].map((x) => x.dataset.chart),
        notes: [...sec.querySelectorAll(".note, .empty")].map((x) => x.textContent),
        heights: [...sec.querySelectorAll("svg.chart")].map((x) => Math.round(x.getBoundingClientRect().height)),
        box: (({ x, y, width, height }) => ({ x, y: y + window.scrollY, width, height }))(sec.getBoundingClientRect()),
      };
    }
    ${MEASURE}
    return {
      counts, fills, sections, ...measure(checks),
      font: getComputedStyle(document.body).fontFamily,
      load_ms: Math.round(performance.getEntriesByType("navigation")[0]?.loadEventEnd ?? -1),
      width: document.documentElement.scrollWidth,
      height: document.documentElement.scrollHeight,
    };
  })()`;
  const evaluated = await s("Runtime.evaluate", { expression, returnByValue: true });
  if (evaluated.exceptionDetails) throw new Error(JSON.stringify(evaluated.exceptionDetails));
  const page = evaluated.result.value;
  const height = Math.min(page.height, 16000);
  await s("Emulation.setDeviceMetricsOverride", {
    width: PAGE_WIDTH,
    height,
    deviceScaleFactor: 1,
    mobile: MOBILE,
  });
  const shot = await s("Page.captureScreenshot", {
    format: "png",
    clip: { x: 0, y: 0, width: PAGE_WIDTH, height, scale: 1 },
    captureBeyondViewport: true,
  });
  const png = Buffer.from(shot.data, "base64");
  fs.writeFileSync(args.screenshot, png);
  // And one screenshot per section, beside it (`<name>-<section>.png`).
  for (const [id, sec] of Object.entries(page.sections)) {
    const b = sec.box;
    if (!b || b.y + b.height > height) continue;
    const part = await s("Page.captureScreenshot", {
      format: "png",
      clip: { x: b.x, y: b.y, width: b.width, height: b.height, scale: 1 },
      captureBeyondViewport: true,
    });
    fs.writeFileSync(args.screenshot.replace(/\.png$/, `-${id}.png`), Buffer.from(part.data, "base64"));
  }
  // Printed: the sections are kept whole.
  await s("Emulation.setEmulatedMedia", { media: "print" });
  const printed = await s("Runtime.evaluate", {
    expression: `[...document.querySelectorAll("section")].map((e) => getComputedStyle(e).breakInside)`,
    returnByValue: true,
  });
  page.print_break_inside = printed.result.value;
  await s("Emulation.setEmulatedMedia", { media: "" });
  // Let any late event (a deferred request, a console message) arrive before reporting.
  await new Promise((r) => setTimeout(r, 200));
  clearTimeout(timer);
  browser.removeAllListeners("exit");
  finish(0, { ...seen, ...page, url, screenshot: png.length });
}

main().catch((e) => {
  console.error(`dashboard-check: ${e.stack || e}\n${stderr.slice(-2000)}`);
  finish(3);
});
