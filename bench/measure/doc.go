// Package measure holds what several benchmarks measure with: latency
// histograms reduced to percentiles (Histogram, LatencySummary), the disk's
// sequential rate by dd with direct I/O, the reference chunk writes and
// re-replication are set against (DD), and the process's peak resident set
// (PeakRSS).
//
// What one benchmark alone reports (chunk-write's table and bar chart,
// re-replication's PNG chart and CPU by replication role) lives with that
// benchmark.
//
// A Histogram belongs to one goroutine: give each worker its own and Merge
// them at the end. DD runs the dd command; it and PeakRSS are Linux's.
package measure
