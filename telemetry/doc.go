// Package telemetry is how strato's servers are watched: Prometheus metrics
// for every gRPC call (server interceptors) and every data-protocol request,
// the HTTP endpoint that serves them beside /healthz, /readyz and Go's
// profiles, and the audit log of mutations.
//
// Metrics follow Prometheus' conventions: names in base units with a unit
// suffix (_seconds, _bytes) and _total on counters, labels of bounded
// cardinality (a gRPC method, a request type, a status code; never a key
// or a client). The servers themselves keep snapshot structs and accept
// small hooks (meta.Options.GRPCServerOptions, datanode.ServerOptions.Observe,
// s3.Options.Observe, consensus.Options.Observers); this package turns them
// into Prometheus collectors, and cmd/strato makes its registries with
// NewRegistry, so that only this package imports the Prometheus client (a
// house rule: internal/lint).
//
// Everything here is safe for concurrent use.
package telemetry
