#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0-only
//
// svg_view.js FILE: open the flame graph FILE in headless Chromium, in a
// window 1200 x 600 px, as a user opens it, and print what the window shows
// once it has loaded, for tests to read:
//
//   height 1168                 the graph's height, px
//   scroll 568                  how far down the window opened
//   root-visible 1              whether the root frame ("all", at the
//                               bottom) is inside the window
//
// Exits 1 when the page throws or has no root frame; 2 when the browser or
// playwright-core cannot be started. playwright-core and the browser are
// found as in dh_view.js ($OUTPUT/npm, Debian's /usr/bin/chromium or
// $CHROMIUM).
"use strict";

const path = require("path");

const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

function die(status, msg) {
  process.stderr.write(`svg_view: ${msg}\n`);
  process.exit(status);
}

function loadPlaywright() {
  return require("./playwright.js").load(die);
}

async function main() {
  const file = process.argv[2];
  if (!file || process.argv.length > 3)
    die(2, "usage: svg_view.js FILE");
  const { chromium } = loadPlaywright();
  let browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  } catch (e) {
    die(2, `cannot start ${CHROMIUM}: ${e.message.split("\n")[0]}`);
  }
  const errors = [];
  const page = await browser.newPage({ viewport: { width: 1200, height: 600 } });
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("file://" + path.resolve(file), { waitUntil: "load" });
  const seen = await page.evaluate(() => {
    const titles = Array.from(document.querySelectorAll("#frames title"));
    const root = titles.find((t) => t.textContent.startsWith("all ("));
    const rect = root && root.parentNode.querySelector("rect").getBoundingClientRect();
    return {
      height: document.documentElement.getBoundingClientRect().height,
      scroll: window.scrollY,
      root: !!root,
      visible: !!rect && rect.top >= 0 && rect.bottom <= window.innerHeight,
    };
  });
  await browser.close();
  if (errors.length)
    die(1, `the page threw: ${errors[0]}`);
  if (!seen.root)
    die(1, "no root frame ('all') in the graph");
  process.stdout.write(`height ${Math.round(seen.height)}\nscroll ${Math.round(seen.scroll)}\n` +
                       `root-visible ${seen.visible ? 1 : 0}\n`);
}

main().catch((e) => die(1, e.message));
