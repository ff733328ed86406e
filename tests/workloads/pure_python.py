# SPDX-License-Identifier: GPL-2.0-only
#
# python3.11 pure_python.py [SECONDS]: CPU-bound pure Python in a few
# functions, over and over for SECONDS (default 10), for
# tests/e2e/debian_stacks.sh: what a user profiles in Debian's own
# interpreter, which is built without frame pointers. No module written in C
# does the work, so the stacks are the interpreter's own (the evaluation loop
# and the object code under it), a few frames deep.
import sys
import time


def sieve(n):
    flags = [True] * (n + 1)
    flags[0] = flags[1] = False
    for i in range(2, int(n**0.5) + 1):
        if flags[i]:
            for j in range(i * i, n + 1, i):
                flags[j] = False
    return sum(flags)


def collatz(limit):
    longest = 0
    for start in range(1, limit):
        n, steps = start, 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        longest = max(longest, steps)
    return longest


def word_counts(n):
    counts = {}
    for i in range(n):
        word = "w" + str((i * 7919) % 1000)
        counts[word] = counts.get(word, 0) + 1
    return len(counts)


def matmul(n):
    a = [[(i * j) % 7 for j in range(n)] for i in range(n)]
    b = [[(i + j) % 5 for j in range(n)] for i in range(n)]
    return [[sum(a[i][k] * b[k][j] for k in range(n)) for j in range(n)] for i in range(n)]


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sieve(50000)
        collatz(2000)
        word_counts(20000)
        matmul(24)


main()
