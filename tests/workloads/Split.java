// SPDX-License-Identifier: GPL-2.0-only
//
// java Split [SECONDS]: spend 70% of the CPU in hot70() and 30% in hot30(),
// for SECONDS (default 6), for tests/e2e/java.sh. Each round calls both with
// the same arithmetic, 7 units against 3, a few milliseconds: both are
// called often enough to be compiled (their loops first, then whole calls)
// while main() runs too few rounds to be compiled and inline them. Prints
// "Split: pid PID" first.
public class Split {
	static volatile long sink;

	// The same body in both: integer arithmetic, no allocation, nothing C2 folds.
	static long hot70(long n) {
		long x = 1;
		for (long i = 0; i < n; i++)
			x = (x * 31 + i) ^ (x >>> 7);
		return x;
	}

	static long hot30(long n) {
		long x = 1;
		for (long i = 0; i < n; i++)
			x = (x * 31 + i) ^ (x >>> 7);
		return x;
	}

	public static void main(String[] args) {
		double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 6;
		long rnd = 88172645463325252L;
		long deadline = System.nanoTime() + (long)(seconds * 1e9);

		System.out.println("Split: pid " + ProcessHandle.current().pid());
		System.out.flush();
		while (System.nanoTime() < deadline) {
			// Calls of random length: a steady period would beat against the sampling clock's.
			rnd ^= rnd << 13;
			rnd ^= rnd >>> 7;
			rnd ^= rnd << 17;
			long unit = 30000 + Math.floorMod(rnd, 300000L);

			sink += hot70(7 * unit);
			sink += hot30(3 * unit);
		}
	}
}
