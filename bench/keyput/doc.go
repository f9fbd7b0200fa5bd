// Package keyput is `strato bench ockg` (alias key-put), Ozone freon's
// ockg, "ozone client key generator": Config.Keys keys of Config.Size bytes
// written by Config.Threads threads through the strato client (Run), with
// freon's summary (keys, bytes, time, MB/s, key latency).
//
// Every key repeats the same pseudo-random Payload, so that what Run wrote,
// and what `bench gen` generates offline with the same payload, can be read
// back and checked (FirstDiff). Run starts its own goroutines and returns
// once they are done.
package keyput
