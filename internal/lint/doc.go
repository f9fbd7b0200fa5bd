// Package lint holds strato's house rules, the ones golangci-lint cannot
// express, as Go tests over the module's own source (after pebble's
// internal/lint). It has no code to import: `go test ./internal/lint/`
// parses every non-generated Go file of the module (not bin/, .cache/,
// testdata/, nor nested modules such as deploy/validate) and fails with the
// rule, the file:line and how to fix it or where to allowlist it:
//
//   - wall clock: the cores and servers (meta, meta/namespace,
//     meta/cluster, datanode, datanode/replication) read time from their
//     caller or their Options.Clock, never from package time's clock;
//   - os files: packages whose file I/O goes through a vfs.FS make no os
//     file calls beside it;
//   - prometheus: only package telemetry imports the Prometheus client;
//   - size: no file over 800 lines, no function over 150;
//   - doc: every exported identifier of the cores (meta/namespace,
//     meta/cluster, wire, walfs, datanode/container, checksum, ec) has a
//     doc comment;
//   - decision records: every record of docs/decisions is listed in
//     design.md's section 10 and in the records' index, and their links
//     point at records that exist.
//
// Each exception is an entry of an allowlist in the test files, keyed by
// file and function, with its reason; an entry that no longer matches
// anything fails too, so the lists shrink as the code improves. Each rule
// also has a test that runs its checker over a violation in testdata/, so
// that no rule passes by checking nothing.
package lint
