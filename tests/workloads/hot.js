// SPDX-License-Identifier: GPL-2.0-only
//
// node hot.js [SECONDS]: spend SECONDS (default 3) of CPU in hotLoop(), a
// function V8 compiles at run time. Run under node --perf-basic-prof, which
// names its machine code in /tmp/perf-PID.map, for tests/e2e/jit.sh. Prints
// "hot.js: pid PID" first, so that the test can remove that file.
'use strict';

// Integer arithmetic only: no allocation, so no garbage collector in the profile.
function hotLoop(deadline) {
	let x = 1;

	while (Date.now() < deadline) {
		for (let i = 0; i < 1000000; i++)
			x = (Math.imul(x, 31) + i) | 0;
	}
	return x;
}

const seconds = process.argv.length > 2 ? Number(process.argv[2]) : 3;

console.log(`hot.js: pid ${process.pid}`);
console.log(`hot.js: ${hotLoop(Date.now() + seconds * 1000)}`);
