#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0-only
//
// dh_view.js FILE [--screenshot PNG]: load the DHAT file FILE into valgrind's
// own viewer (dh_view.html) in headless Chromium and print what it renders,
// a fact a line, for tests to read:
//
//   mode heap                       the "Invocation" block
//   cmd /bin/ls
//   pid 23044
//   t-gmax 769,894 instrs           the "Times" block, as the viewer words it
//   t-end 1,269,195 instrs
//   total 212673 bytes 478 blocks   the root PP's figures, as plain numbers
//   t-gmax-total 131322 bytes 408 blocks
//   t-end-total 92812 bytes 269 blocks
//   pp 1.2 total 1600 bytes 1 blocks gmax 1600 bytes 1 blocks end 0 bytes 0 blocks max 1600 bytes 1 blocks
//   frame 1.2 "0x4011A6: site70 (alloc_sites.c:21)"
//
// One "pp" line per node the viewer shows in full (its tree aggregates the
// insignificant ones, and shows max only for leaves), then a "frame" line
// per frame of that node (JSON-quoted, the node's own frames, innermost
// first). Numbers are read with the en-US locale the page runs in.
//
// Exits 1, saying why on stderr, when the viewer shows an error (it prints
// its parse and check errors into the page), the page throws, or the totals
// are missing; 2 when the browser or playwright-core cannot be started.
//
// playwright-core comes from $OUTPUT/npm (make playwright-core, OUTPUT
// defaults to build/); the browser is Debian's /usr/bin/chromium ($CHROMIUM
// names another), never one playwright downloads; the viewer is
// /usr/libexec/valgrind/dh_view.html ($DH_VIEW names another).
"use strict";

const path = require("path");
const fs = require("fs");

const VIEWER = process.env.DH_VIEW || "/usr/libexec/valgrind/dh_view.html";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const TIMEOUT_MS = 60000;

function die(status, msg) {
  process.stderr.write(`dh_view: ${msg}\n`);
  process.exit(status);
}

function loadPlaywright() {
  return require("./playwright.js").load(die);
}

function parseArgs(argv) {
  const args = { file: null, screenshot: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--screenshot" && i + 1 < argv.length) {
      args.screenshot = argv[++i];
    } else if (!args.file && !argv[i].startsWith("-")) {
      args.file = argv[i];
    } else {
      die(2, `usage: dh_view.js FILE [--screenshot PNG]`);
    }
  }
  if (!args.file) {
    die(2, `usage: dh_view.js FILE [--screenshot PNG]`);
  }
  return args;
}

// "212,673" -> "212673"; "1,600.5" -> "1600.5".
function num(s) {
  return s.replace(/,/g, "");
}

// "212,673 bytes (100%, ...) in 478 blocks (100%, ...)": [bytes, blocks], or null.
function bytesBlocks(s) {
  const m = /([\d,.]+) bytes\b.* in ([\d,.]+) blocks\b/.exec(s);
  return m ? [num(m[1]), num(m[2])] : null;
}

// The viewer's text, a node ("PP 1.2/3 {" ... "}") at a time.
function parseTree(text) {
  const facts = [];
  const nodes = [];
  let node = null;
  for (const line of text.split("\n")) {
    let m;
    if ((m = /^\s*Mode:\s+(.*)$/.exec(line))) {
      facts.push(`mode ${m[1]}`);
    } else if ((m = /^\s*Command:\s+(.*)$/.exec(line))) {
      facts.push(`cmd ${m[1]}`);
    } else if ((m = /^\s*PID:\s+(.*)$/.exec(line))) {
      facts.push(`pid ${m[1]}`);
    } else if ((m = /^\s*t-gmax:\s+(.*?)\s*\(.*of program duration\)\s*$/.exec(line))) {
      facts.push(`t-gmax ${m[1]}`);
    } else if ((m = /^\s*t-end:\s+(.*?)\s*$/.exec(line))) {
      facts.push(`t-end ${m[1]}`);
    } else if ((m = /PP ([\d.]+)\/\d+ /.exec(line))) {
      node = { id: m[1], frames: [] };
      nodes.push(node);
    } else if (node && (m = /\bTotal:\s+(.*)$/.exec(line))) {
      node.total = bytesBlocks(m[1]);
    } else if (node && (m = /\bMax:\s+(.*)$/.exec(line))) {
      node.max = bytesBlocks(m[1]);
    } else if (node && (m = /\bAt t-gmax:\s+(.*)$/.exec(line))) {
      node.gmax = bytesBlocks(m[1]);
    } else if (node && (m = /\bAt t-end:\s+(.*)$/.exec(line))) {
      node.end = bytesBlocks(m[1]);
    } else if (node && (m = /#\d+: (.*)$/.exec(line))) {
      node.frames.push(m[1]);
    }
  }
  return { facts, nodes };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(args.file)) {
    die(2, `cannot read '${args.file}'`);
  }
  if (!fs.existsSync(VIEWER)) {
    die(2, `no viewer at '${VIEWER}' (valgrind's dh_view.html; set DH_VIEW)`);
  }
  const { chromium } = loadPlaywright();

  let browser;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // As root, Chromium runs only without its sandbox.
      args: ["--no-sandbox"],
    });
  } catch (e) {
    die(2, `cannot start '${CHROMIUM}': ${e.message.split("\n")[0]}`);
  }
  const problems = [];
  try {
    const context = await browser.newContext({ locale: "en-US", viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    page.on("pageerror", (e) => problems.push(`the page threw: ${e.message}`));
    await page.goto("file://" + path.resolve(VIEWER));
    await page.setInputFiles("input[type=file]", path.resolve(args.file));
    // Done when the tree is drawn (its last line is the threshold) or an error shows.
    await page.waitForFunction(
      () => document.querySelector(".error") || /PP significance threshold/.test(document.body.innerText),
      null, { timeout: TIMEOUT_MS });
    const error = await page.evaluate(() => {
      const e = document.querySelector(".error");
      return e ? e.textContent : null;
    });
    if (error) {
      problems.unshift(`the viewer shows an error: ${error}`);
    }
    const text = await page.evaluate(() => {
      const pre = document.querySelector("pre");
      return pre ? pre.innerText : "";
    });
    if (args.screenshot) {
      await page.screenshot({ path: args.screenshot, fullPage: true });
    }
    const { facts, nodes } = parseTree(text);
    const root = nodes[0];
    if (!error && (!root || !root.total || !root.gmax || !root.end)) {
      problems.push("the viewer shows no totals (Total, At t-gmax, At t-end of the root PP)");
    }
    if (!problems.length) {
      const out = [...facts];
      out.push(`total ${root.total[0]} bytes ${root.total[1]} blocks`);
      out.push(`t-gmax-total ${root.gmax[0]} bytes ${root.gmax[1]} blocks`);
      out.push(`t-end-total ${root.end[0]} bytes ${root.end[1]} blocks`);
      for (const n of nodes) {
        if (!n.total) {
          continue;
        }
        let l = `pp ${n.id} total ${n.total[0]} bytes ${n.total[1]} blocks`;
        for (const [k, v] of [["gmax", n.gmax], ["end", n.end], ["max", n.max]]) {
          if (v) {
            l += ` ${k} ${v[0]} bytes ${v[1]} blocks`;
          }
        }
        out.push(l);
        for (const f of n.frames) {
          out.push(`frame ${n.id} ${JSON.stringify(f)}`);
        }
      }
      process.stdout.write(out.join("\n") + "\n");
    }
  } catch (e) {
    problems.push(`${e.message.split("\n")[0]}`);
  } finally {
    await browser.close();
  }
  if (problems.length) {
    die(1, `'${args.file}': ${problems.join("; ")}`);
  }
}

main();
