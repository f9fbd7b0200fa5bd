package stratopb

// Error details shared by meta and its clients. A meta replica that is not
// the leader answers Unavailable with an ErrorInfo of reason
// NotLeaderReason and domain ErrorDomain, whose metadata "leader" holds the
// leader's address when it is known.
const (
	ErrorDomain     = "strato.meta"
	NotLeaderReason = "NOT_LEADER"
)
