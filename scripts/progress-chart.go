//go:build ignore

// progress-chart draws the rate of a `strato bench meta` run over its
// course from its progress lines ("bench meta create: N/TOTAL ops ...",
// one every 5 s), in thousands of operations a second per interval:
//
//	go run scripts/progress-chart.go RUN.log OUT.png "title"
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/strato-io/strato/bench/rereplicate"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/progress-chart.go RUN.log OUT.png TITLE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	const interval = 5 * time.Second // nnbench's progress interval
	re := regexp.MustCompile(`: (\d+)/(\d+) ops`)
	var samples []float64
	prev := int64(0)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		samples = append(samples, float64(n-prev)/interval.Seconds()/1e3)
		prev = n
	}
	if len(samples) == 0 {
		fmt.Fprintln(os.Stderr, "no progress lines")
		os.Exit(1)
	}
	if err := rereplicate.WriteChart(os.Args[2], os.Args[3], samples, interval, 0, ""); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	first, last := tenth(samples, false), tenth(samples, true)
	fmt.Printf("%d intervals; first 10%%: %.2fk ops/s, last 10%%: %.2fk ops/s (%.2fx)\n", len(samples), first, last, last/first)
}

// tenth is the mean rate over the first (or last) tenth of the intervals.
func tenth(s []float64, last bool) float64 {
	k := max(len(s)/10, 1)
	part := s[:k]
	if last {
		part = s[len(s)-k:]
	}
	sum := 0.0
	for _, v := range part {
		sum += v
	}
	return sum / float64(len(part))
}
