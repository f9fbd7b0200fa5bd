// Package certs makes and loads the certificates of a cluster's TLS: a
// cluster CA (InitCA), node and client certificates signed by it (Issue),
// and the tls.Configs of servers and clients built from those files
// (ServerConfig, ClientConfig).
//
// Every certificate the CA issues is good for both ends of a connection
// (server and client auth): a datanode serves the data protocol and is a
// client of meta and of other datanodes with the same certificate.
//
// Files are PEM: DIR/ca.crt and DIR/ca.key for the CA, NAME.crt and
// NAME.key for an issued certificate. Keys are ECDSA P-256 and written with
// mode 0600. Functions are safe for concurrent use but do not lock the
// files they write: run one InitCA or Issue on a directory at a time.
package certs
