// SPDX-License-Identifier: GPL-2.0-only
//
// What dh_view.js and svg_view.js share: playwright-core from $OUTPUT/npm
// (make playwright-core; OUTPUT defaults to build/), never a browser it
// downloads. load(die) returns the module, or calls die(2, why).
"use strict";

const path = require("path");

function load(die) {
  const out = path.resolve(process.env.OUTPUT || path.join(__dirname, "..", "..", "build"));
  const dir = path.join(out, "npm", "node_modules");
  try {
    return require(require.resolve("playwright-core", { paths: [dir] }));
  } catch (e) {
    die(2, `cannot load playwright-core from '${dir}': run 'make playwright-core' (${e.code || e.message})`);
  }
}

module.exports = { load };
