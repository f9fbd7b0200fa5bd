// Package client is strato's Go client library.
//
// MetaConn connects to a meta group (one replica or three) and follows its
// leader: calls go to the replica believed to lead, NotLeader answers
// redirect them, and calls that certainly were not performed are retried.
// It is safe for concurrent use.
package client
