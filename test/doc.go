// Package test holds tests that run strato as real processes: the binary
// is built once per test run and driven like a user would.
package test
