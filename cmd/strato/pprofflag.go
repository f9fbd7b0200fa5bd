package main

import "github.com/spf13/pflag"

// addPprofFlag adds --pprof, which serves Go's profiles on the --http
// endpoint (telemetry.Endpoint.Pprof).
func addPprofFlag(f *pflag.FlagSet, on *bool) {
	f.BoolVar(on, "pprof", false, "with --http: serve Go's profiles at /debug/pprof/, to callers on this host only (a loopback address; go tool pprof http://127.0.0.1:PORT/debug/pprof/profile)")
}
