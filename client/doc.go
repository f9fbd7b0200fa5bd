// Package client is strato's Go client library.
//
// MetaConn connects to a meta group (one replica or three) and follows its
// leader: calls go to the replica believed to lead, NotLeader answers
// redirect them, and calls that certainly were not performed are retried.
// Namespace calls are retry-safe (reads, and mutations that carry a request
// ID, which meta applies once): an attempt that gets no answer within
// Options.AttemptTimeout, or loses its connection mid-call, is sent again to
// another replica. It is safe for concurrent use.
package client
