# SPDX-License-Identifier: GPL-2.0-only
#
# python3.X py_work.py MODE [SECONDS]: Python code whose profile is known,
# for tests/e2e/python.sh, in every CPython the machine has. It runs MODE
# for SECONDS (default 5), prints "ready" first, and works in the same
# way on 3.10 to 3.13 (no newer syntax).
#
#   split    hot70 and hot30 share the CPU 70/30: the same loop body, run
#            7 times for every 3
#   threads  two threads, named "py-left" and "py-right" (prctl), each in its
#            own function: left_worker and right_worker
#   zlib     compress_caller calls zlib.compress over and over: C called by
#            Python
#   sleep    for --wall: nap sleeps 40% of the time in time.sleep, spin
#            computes the other 60%
#   reexec   before_exec runs for half the time, then the process execs
#            the same interpreter, which runs after_exec for the other half
#   crowd    500 threads wait while the main thread, the last of the
#            interpreter's list of threads, runs crowd_worker
#   subinterpreter  a thread runs sub_worker in a subinterpreter of its
#            own while the main thread runs main_worker, sleeping a little
#            between rounds
import ctypes
import os
import sys
import threading
import time
import zlib


def unit():
    total = 0
    for i in range(20000):
        total += i * i % 7
    return total


def hot70():
    for _ in range(7):
        unit()


def hot30():
    for _ in range(3):
        unit()


def split(end):
    while time.monotonic() < end:
        hot70()
        hot30()


def name_thread(name):
    # PR_SET_NAME: the name the kernel, and so the profile, shows.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(15, ctypes.c_char_p(name.encode()), 0, 0, 0)


def left_worker(end):
    name_thread("py-left")
    while time.monotonic() < end:
        unit()


def right_worker(end):
    name_thread("py-right")
    while time.monotonic() < end:
        unit()


def threads(end):
    workers = [threading.Thread(target=f, args=(end,)) for f in (left_worker, right_worker)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


def compress_caller(end):
    data = bytes(range(256)) * 4096
    while time.monotonic() < end:
        zlib.compress(data, 6)


def spin(seconds):
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        unit()


def nap(seconds):
    time.sleep(seconds)


def sleep(end):
    while time.monotonic() < end:
        spin(0.06)
        nap(0.04)


SUB_WORKER = """
import time
def sub_worker(end):
    while time.monotonic() < end:
        sum(i * i for i in range(1000))
sub_worker(%r)
"""


def main_worker(end):
    # Sleeping lets the subinterpreter's thread start: before 3.12 it
    # waits for the GIL the main thread would otherwise keep.
    while time.monotonic() < end:
        sum(i * i for i in range(1000))
        time.sleep(0.001)


def subinterpreter(end):
    try:
        import _xxsubinterpreters as interpreters
    except ImportError:  # 3.13
        import _interpreters as interpreters

    def run():
        interpreters.run_string(interpreters.create(), SUB_WORKER % end)

    thread = threading.Thread(target=run)
    thread.start()
    main_worker(end)
    thread.join()


# Halves of CPU time, not wall time: on a busy machine the new interpreter's
# start took a tenth of after_exec's wall-clock half.
def before_exec(end):
    half = (end - time.monotonic()) / 2
    stop = time.process_time() + half
    while time.process_time() < stop:
        unit()
    os.execv(sys.executable, [sys.executable, __file__, "afterexec", str(half)])


def after_exec(seconds):
    stop = time.process_time() + seconds
    while time.process_time() < stop:
        unit()


def crowd_worker(seconds):
    # CPU time, not wall time: its share of the process's samples is then the
    # same on a busy machine, where starting the threads takes more of it.
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        unit()


def crowd(end):
    seconds = end - time.monotonic()
    done = threading.Event()
    waiting = [threading.Thread(target=done.wait) for _ in range(500)]
    for t in waiting:
        t.start()
    crowd_worker(seconds)
    done.set()
    for t in waiting:
        t.join()


MODES = {
    "reexec": before_exec,
    "afterexec": after_exec,
    "crowd": crowd,
    "split": split,
    "threads": threads,
    "zlib": compress_caller,
    "sleep": sleep,
    "subinterpreter": subinterpreter,
}


def main():
    mode = MODES[sys.argv[1]]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5
    if mode is after_exec:  # its argument is the CPU time to run for
        after_exec(seconds)
        return
    print("ready", flush=True)
    mode(time.monotonic() + seconds)


main()
