// SPDX-License-Identifier: GPL-2.0-only

// go_split: a Go program for tests/e2e/go.sh, built stripped as Debian
// builds Go (-ldflags='-s -w'). Two goroutine roots, checkout and browse,
// call one hot function, crunch; checkout is given 70% of the work, browse
// 30%, in turns of a few milliseconds. With -cpuprofile FILE it writes Go's
// own CPU profile of the run, the oracle the test compares with; with
// -depth N the work runs N calls deeper (bench/deep-frames); with -labels,
// each handler runs under the pprof label handler=checkout or
// handler=browse (pprof.Do), as a server labels its requests.
//
//	go_split [-cpuprofile FILE] [-depth N] [-labels] SECONDS
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"time"
)

var sink uint64

// crunch is the hot function both handlers share.
//
//go:noinline
func crunch(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	return x
}

//go:noinline
func checkout(n int) { sink += crunch(n) }

//go:noinline
func browse(n int) { sink += crunch(n) }

var labelled = flag.Bool("labels", false, "run each handler under a pprof label")

// handle runs f(n) as the handler @name.
func handle(name string, f func(int), n int) {
	if !*labelled {
		f(n)
		return
	}
	pprof.Do(context.Background(), pprof.Labels("handler", name), func(context.Context) { f(n) })
}

// deeper calls itself n times, then works until @end.
//
//go:noinline
func deeper(n int, end time.Time) {
	if n > 0 {
		deeper(n-1, end)
		return
	}
	for time.Now().Before(end) {
		handle("checkout", checkout, 700000)
		handle("browse", browse, 300000)
	}
}

func main() {
	cpuprofile := flag.String("cpuprofile", "", "write Go's own CPU profile to this file")
	depth := flag.Int("depth", 0, "run the work this many calls deeper")
	flag.Parse()
	seconds, err := strconv.ParseFloat(flag.Arg(0), 64)
	if err != nil || seconds <= 0 {
		fmt.Fprintln(os.Stderr, "usage: go_split [-cpuprofile FILE] [-depth N] [-labels] SECONDS")
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	deeper(*depth, time.Now().Add(time.Duration(seconds*float64(time.Second))))
	fmt.Println(sink != 0)
}
