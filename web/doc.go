// Package web is strato's console: server-rendered pages that show an
// operator the cluster at a glance and where it hurts — the overview
// (capacity, datanodes, containers and their problems, safe mode, the meta
// replicas, live rates), the datanodes, pipelines and containers (with
// filters for the problem states), the namespace (volumes, buckets,
// directories and keys, paged, with a download), and the operations in
// flight. Meta serves it on its --http address (strato meta --http,
// strato dev), beside /metrics.
//
// The console is a client: it reads meta's state through the same gRPC
// APIs as the CLI (AdminService, NamespaceService, through package client,
// which follows the leader), never from meta's memory, so that what it
// shows is what `strato admin` and `strato sh` show. A follower serves it
// too: every page says the replica is a follower and where the leader is,
// and the data comes from the leader. Every list is paged (?after=, the
// last entry of the previous page); bad input — an unknown datanode,
// container, volume, bucket or path, a malformed ID or page token —
// answers 404 or 400 with a page that says why, never a 500.
//
// Templates, the style sheet and the small script of the live charts are
// embedded (go:embed): there is no build step. /api/overview returns the
// overview as JSON, and /api/rates the samples behind the charts.
//
// A Console is safe for concurrent use; Close stops its sampler and closes
// its connections.
package web
