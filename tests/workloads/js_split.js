// SPDX-License-Identifier: GPL-2.0-only
//
// node js_split.js SECONDS [DEPTH]: a JavaScript program for
// tests/e2e/node.sh. Two handlers, checkout and browse, call one hot
// function, crunch; checkout is given 70% of the work, browse 30%, in turns
// of a few milliseconds. Run with no flags, as production runs node; under
// `node --cpu-prof` V8's own profile of the same run is the oracle the test
// compares with. With DEPTH, the work runs DEPTH calls deeper
// (bench/deep-frames).
'use strict';

let sink = 0;

// The hot function both handlers share: integer arithmetic, no allocation.
function crunch(n) {
	let x = n | 0;

	for (let i = 0; i < n; i++) {
		x = (Math.imul(x, 1103515245) + 12345) | 0;
		x ^= x >>> 13;
	}
	return x;
}

function checkout(n) {
	sink ^= crunch(n);
}

function browse(n) {
	sink ^= crunch(n);
}

// The turns' length varies, so that the clock that samples us cannot keep step with them.
function serve(deadline) {
	let turn = 0;

	while (Date.now() < deadline) {
		const n = 20000 + ((turn++ * 7919) % 13) * 2000;
		checkout(7 * n);
		browse(3 * n);
	}
}

// Calls itself @n times, then serves until @deadline.
function deeper(n, deadline) {
	if (n > 0)
		return deeper(n - 1, deadline) + 1;
	serve(deadline);
	return 0;
}

const seconds = Number(process.argv[2]);
const depth = process.argv.length > 3 ? Number(process.argv[3]) : 0;
if (!(seconds > 0) || !(depth >= 0)) {
	console.error('usage: node js_split.js SECONDS [DEPTH]');
	process.exit(2);
}
deeper(depth, Date.now() + seconds * 1000);
console.log(`js_split: ${sink}`);
