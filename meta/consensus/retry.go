package consensus

import "errors"

// DefaultHint classifies this package's errors for a leader.Redirector: a
// NotLeaderError's address, and Retryable or ErrClosed errors (try another
// node).
func DefaultHint(err error) (string, bool) {
	var nle *NotLeaderError
	if errors.As(err, &nle) {
		return nle.LeaderAddr, true
	}
	return "", Retryable(err) || errors.Is(err, ErrClosed)
}
